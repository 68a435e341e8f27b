"""A WebSocket client with Python's websockets, as a person's script would be:
reads the server's greeting, sends text, binary, a fragmented message and a
ping, then closes with 4000 "bye". Prints what it saw as one JSON list, so a
test can compare runs with and without capture."""
import asyncio
import json
import sys

from websockets.asyncio.client import connect


async def main(url):
    seen = []
    async with connect(url, ping_interval=None) as ws:
        seen.append(["text", await ws.recv()])
        await ws.send("hello")
        seen.append(["text", await ws.recv()])
        await ws.send(bytes(range(256)) * 4)
        seen.append(["binary", (await ws.recv()).hex()])
        await ws.send(["frag", "mented ", "message"])
        seen.append(["text", await ws.recv()])
        await (await ws.ping(b"p1"))
        seen.append(["pong"])
        await ws.close(code=4000, reason="bye")
        seen.append(["close", ws.close_code, ws.close_reason])
    print(json.dumps(seen))


asyncio.run(main(sys.argv[1]))
