# A pod's side of PodCongestionKernelTest: listens on PORT (both families) and holds every connection it
# accepts or makes, answering on stdout what congestion control the kernel gave each (TCP_CONGESTION).
# Usage: python3 tcpholder.py PORT PEER...   then on stdin:
#   connect      connects to PORT of every PEER; prints "active PEER CC" per connection, then "end"
#   accepted N   waits for N connections accepted since the last such call; prints "passive PEER CC" each, then "end"
import socket
import sys
import threading

port = int(sys.argv[1])
peers = sys.argv[2:]
accepted = []
arrived = threading.Condition()
held = []


def congestion(sock):
    return sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, 16).split(b"\0")[0].decode()


def serve(listener):
    while True:
        conn, peer = listener.accept()
        with arrived:
            accepted.append((peer[0], conn))
            arrived.notify_all()


listener = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
listener.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
listener.bind(("::", port))
listener.listen(64)
threading.Thread(target=serve, args=(listener,), daemon=True).start()
print("ready", flush=True)

for line in sys.stdin:
    words = line.split()
    if words[0] == "connect":
        for peer in peers:
            sock = socket.create_connection((peer, port), timeout=10)
            held.append(sock)
            print("active", peer, congestion(sock))
    elif words[0] == "accepted":
        want = int(words[1])
        with arrived:
            if not arrived.wait_for(lambda: len(accepted) >= want, timeout=10):
                print("error only", len(accepted), "of", want, "accepted")
            for peer, conn in accepted:
                held.append(conn)
                print("passive", peer, congestion(conn))
            accepted.clear()
    print("end", flush=True)
