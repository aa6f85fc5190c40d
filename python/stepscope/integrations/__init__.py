"""Training-framework callbacks that record a trace with stepscope's recorder.

Each module imports its framework, so import the one you use:
``stepscope.integrations.hf`` (transformers) or
``stepscope.integrations.lightning`` (Lightning). ``import stepscope``
imports neither.
"""
