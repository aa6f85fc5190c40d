"""A table of the report: rows of plain values, and a pandas view on demand.

pandas is imported only by :meth:`Table.to_pandas`, so ``import stepscope``
stays quick and works without it.
"""


class Table:
    """Rows (dicts with the same keys, in ``columns`` order) of one report table."""

    def __init__(self, name, columns, rows):
        self.name = name
        self.columns = list(columns)
        self.rows = [{c: r.get(c) for c in self.columns} for r in rows]

    def __len__(self):
        return len(self.rows)

    def __iter__(self):
        return iter(self.rows)

    def __getitem__(self, i):
        return self.rows[i]

    def __repr__(self):
        return f"<stepscope.Table {self.name}: {len(self.rows)} rows x {len(self.columns)} columns>"

    def to_pandas(self):
        """The table as a pandas DataFrame (needs pandas)."""
        try:
            import pandas
        except ImportError as e:  # say what is missing, not only that an import failed
            raise ImportError("Table.to_pandas() needs pandas: pip install pandas") from e
        return pandas.DataFrame(self.rows, columns=self.columns)

    def _repr_html_(self):
        # A notebook shows the DataFrame when pandas is there; else a plain table.
        try:
            return self.to_pandas()._repr_html_()
        except ImportError:
            import html

            head = "".join(f"<th>{html.escape(c)}</th>" for c in self.columns)
            body = "".join(
                "<tr>" + "".join(f"<td>{html.escape(str(r[c]))}</td>" for c in self.columns) + "</tr>"
                for r in self.rows
            )
            return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"
