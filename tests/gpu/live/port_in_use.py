# A server binds a port that another process already holds (asyncio's own error names the
# address, as the servers built on it print it).
import asyncio, sys

port = int(sys.argv[1]) if len(sys.argv) > 1 else 18000

async def main():
    server = await asyncio.start_server(lambda r, w: None, "127.0.0.1", port)
    async with server:
        print("listening on %d" % port)

asyncio.run(main())
