"""The MCP surface: memory tools for any MCP host, with the scope fixed outside the model's reach.

One tool set (``server``), built from the operation registry (``tools``), rendered for models
(``text``), over two transports (``transports``: stdio and streamable HTTP). Errors are tool
results with ``isError`` set: the text reads ``<code>: <message>`` and the structured content is
the same problem JSON the REST API answers.
"""

from engramdb.api.mcp.server import FACT_URI, build_server
from engramdb.api.mcp.transports import (
    CALLER_KEY,
    HttpEndpoint,
    configured_caller,
    http_endpoint,
    scoped_caller,
    serve_stdio,
)

__all__ = [
    "CALLER_KEY",
    "FACT_URI",
    "HttpEndpoint",
    "build_server",
    "configured_caller",
    "http_endpoint",
    "scoped_caller",
    "serve_stdio",
]
