"""Helpers for statements written out in SQL (``games.reads``, ``accounts.backends``): a
model's columns in a statement, and their values made into Python as a queryset makes them
(the database's converters, then the field's)."""

from __future__ import annotations

from typing import Any

from django.db import connections
from django.db.models import Model


class Columns:
    """A model's concrete columns in a statement (under ``alias``): the SQL that selects them,
    and how to make an instance of the model from them (the fields' database converters, then
    ``Model.from_db``, as a queryset does)."""

    def __init__(self, model: type[Model], alias: str, using: str) -> None:
        connection = connections[using]
        qn = connection.ops.quote_name
        fields = model._meta.concrete_fields
        self.model, self.using = model, using
        self.names = [f.attname for f in fields]
        self.sql = ", ".join(f"{alias}.{qn(f.column)}" for f in fields)
        # The converters depend on the database's kind and the settings only (they are kept
        # for the process; each call gets the calling thread's connection).
        self.converters = [converters_of(f, alias, using) for f in fields]

    def __len__(self) -> int:
        return len(self.names)

    def make(self, row: tuple[Any, ...], start: int) -> Any:
        """The instance of ``row[start:start + len(self)]``."""
        connection = connections[self.using]
        values = [
            convert(value, column, converters, connection)
            for value, (column, converters) in zip(
                row[start : start + len(self.names)], self.converters, strict=True
            )
        ]
        return self.model.from_db(self.using, self.names, values)


def converters_of(field: Any, alias: str, using: str) -> tuple[Any, list[Any]]:
    """A selected column of ``field`` (under ``alias``) and the converters its values go
    through, the database's and the field's, as a queryset applies them."""
    connection = connections[using]
    column = field.get_col(alias)
    return column, connection.ops.get_db_converters(column) + field.get_db_converters(connection)


def convert(value: Any, column: Any, converters: list[Any], connection: Any) -> Any:
    for step in converters:
        value = step(value, column, connection)
    return value
