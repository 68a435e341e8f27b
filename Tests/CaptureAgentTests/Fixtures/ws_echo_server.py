"""A WebSocket echo server with Python's websockets: writes its port to the
file named by argv[1], echoes every text and binary message, and after
argv[2] connections have ended prints, one JSON line each, what every
connection received (messages, then the client's close code and reason)."""
import asyncio
import json
import os
import sys

from websockets.asyncio.server import serve
from websockets.exceptions import ConnectionClosed


async def main(port_file, connections):
    transcripts = []
    done = asyncio.Event()

    async def echo(ws):
        seen = []
        try:
            async for message in ws:
                seen.append(["text", message] if isinstance(message, str) else ["binary", message.hex()])
                await ws.send(message)
        except ConnectionClosed:
            pass  # a close code other than 1000 or 1001; the transcript says which
        finally:
            seen.append(["close", ws.close_code, ws.close_reason])
            transcripts.append(seen)
            if len(transcripts) == connections:
                done.set()

    async with serve(echo, "127.0.0.1", 0, ping_interval=None) as server:
        port = server.sockets[0].getsockname()[1]
        with open(port_file + ".tmp", "w") as out:
            out.write(str(port))
        os.rename(port_file + ".tmp", port_file)
        await done.wait()
    for seen in transcripts:
        print(json.dumps(seen))


asyncio.run(main(sys.argv[1], int(sys.argv[2])))
