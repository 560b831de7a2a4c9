"""How long the server keeps an idle HTTP connection open: longer than its clients do.

An idle keep-alive connection is closed by whichever side times out first. When the server does,
a request the client sent in that same instant finds the socket closed with its bytes unread, and
the client gets a reset (``ECONNRESET``) for a request that may well have been a write. uvicorn's
default is 5 s, the same as httpx's (the SDK's client), so an agent that paused about 5 s between
two calls raced the server (old and new loopback servers alternated, requests sent 4.97-5.03 s after
the last on a busy server: 7 resets in 928 against 0 in 928). Clients that expire idle connections
sooner than this (httpx 5 s, undici 4 s, Node's agent 5 s, Go 90 s) close first and open a new one;
one that never expires them (urllib3, and so requests) can still meet the close, after 120 s idle.

A connection that sends no request, or only part of one, is closed once its head is late
(api/slow_clients.py); this wait is for one that sent a whole request and was answered.
"""

from __future__ import annotations

KEEP_ALIVE_SECONDS = 120
