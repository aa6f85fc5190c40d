"""The one error of the shard writer and reader: a message naming the shard
(or the input file and line) and what is wrong with it."""


class ShardError(ValueError):
    def __init__(self, where, what):
        super().__init__(f"{where}: {what}")
        self.where = where
        self.what = what
