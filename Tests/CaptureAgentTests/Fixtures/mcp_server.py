"""An MCP server from PyPI's `mcp` SDK (2.x), streamable HTTP on uvicorn with
a 2 s keep-alive: the peer of MCPServerPeerTests. Usage: mcp_server.py PORT"""
import asyncio
import sys
import uvicorn
from mcp.server.mcpserver import Context, MCPServer

server = MCPServer("netinspect-peer")

@server.tool()
def add(a: int, b: int) -> int:
    """Adds two numbers."""
    return a + b

@server.tool()
async def slow_add(a: int, b: int, steps: int, ctx: Context) -> int:
    """Adds two numbers in `steps` steps of 0.3 s, reporting progress after each."""
    for step in range(1, steps + 1):
        await asyncio.sleep(0.3)
        await ctx.report_progress(step, steps)
    return a + b

@server.tool()
def divide(a: int, b: int) -> float:
    """Divides; b = 0 makes a tool error (a result with isError: true)."""
    if b == 0:
        raise ValueError("division by zero")
    return a / b

app = server.streamable_http_app()
uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), log_level="warning", timeout_keep_alive=2)
