"""Log filters: what the server's log says of requests it refused on purpose.

A request body over ``DATA_UPLOAD_MAX_MEMORY_SIZE`` is refused (400) from its length alone;
Django logs it as an ERROR with a traceback (``django.security.RequestDataTooBig``), which
looks like a failure of the server and hides real ones. It is a client's doing: one WARNING
line, with the size and the path."""

from __future__ import annotations

import logging


class RequestTooBig(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        request = getattr(record, "request", None)
        meta = getattr(request, "META", {}) or {}
        size = meta.get("CONTENT_LENGTH") or "?"
        path = getattr(request, "path", "?")
        record.levelno, record.levelname = logging.WARNING, "WARNING"
        record.msg, record.args = (
            "refused a request body of %s bytes for %s (too large)",
            (
                size,
                path,
            ),
        )
        record.exc_info = record.exc_text = None
        return True
