"""An MCP server from PyPI's `mcp` SDK (2.x), streamable HTTP on uvicorn with
a 2 s keep-alive: the peer of MCPServerPeerTests. Usage: mcp_server.py PORT"""
import sys
import uvicorn
from mcp.server.mcpserver import MCPServer

server = MCPServer("netinspect-peer")

@server.tool()
def add(a: int, b: int) -> int:
    """Adds two numbers."""
    return a + b

app = server.streamable_http_app()
uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), log_level="warning", timeout_keep_alive=2)
