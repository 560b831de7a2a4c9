"""The MCP surface: memory tools for any MCP host, with the scope fixed outside the model's reach.

One tool set (``server``), built from the operation registry (``tools``), rendered for models
(``text``), over two transports (``transports``: stdio and streamable HTTP), the HTTP one mounted
in the REST server on its first request (``mount``). Errors are tool results with ``isError`` set:
the text reads ``<code>: <message>`` and the structured content is the same problem JSON the REST
API answers.

Nothing is imported here: the MCP SDK takes about a second to import, which ``engram serve`` pays
only when a host first connects (import the submodules by name).
"""
