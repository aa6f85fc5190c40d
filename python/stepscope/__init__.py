"""stepscope's Python front: bindings of the C++ library (``_stepscope``)."""
