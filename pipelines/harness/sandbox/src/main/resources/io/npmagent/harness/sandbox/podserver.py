# A sandbox pod's servers: every declared port, TCP (accept and close) and UDP (echo), both families.
# Usage: python3 podserver.py READY_FILE tcp:80 udp:53 ...  READY_FILE appears once every socket is bound.
import socket
import sys
import threading


def tcp(sock):
    while True:
        conn, _ = sock.accept()
        conn.close()


def udp(sock):
    while True:
        data, peer = sock.recvfrom(2048)
        sock.sendto(data, peer)


def bind(kind, port):
    sock = socket.socket(socket.AF_INET6, kind)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
    sock.bind(("::", port))
    return sock


threads = []
for spec in sys.argv[2:]:
    proto, port = spec.split(":")
    if proto == "tcp":
        s = bind(socket.SOCK_STREAM, int(port))
        s.listen(1024)
        threads.append(threading.Thread(target=tcp, args=(s,), daemon=True))
    else:
        threads.append(threading.Thread(target=udp, args=(bind(socket.SOCK_DGRAM, int(port)),), daemon=True))
for t in threads:
    t.start()
open(sys.argv[1], "w").close()
threading.Event().wait()
