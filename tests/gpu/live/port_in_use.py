# A server binds a port that another process already holds.
import socket, sys
port = int(sys.argv[1]) if len(sys.argv) > 1 else 18000
s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
s.bind(("127.0.0.1", port))
s.listen()
print("listening on %d" % port)
