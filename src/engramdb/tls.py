"""One TLS context per process for every HTTP client EngramDB makes.

httpx builds a verifying context for each new client (~60 ms of CPU: it loads the CA bundle), even
for a client that only ever speaks plain HTTP to a loopback server. A context is safe to share
between clients and threads, so they share one, built on first use with httpx's own defaults.
"""

from __future__ import annotations

import functools
import ssl

import httpx


@functools.cache
def context() -> ssl.SSLContext:
    """The process's verifying context (httpx's CA bundle, or ``SSL_CERT_FILE``/``SSL_CERT_DIR``)."""
    return httpx.create_ssl_context()
