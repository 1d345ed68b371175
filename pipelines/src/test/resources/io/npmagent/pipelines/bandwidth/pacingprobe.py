# PacingKernelTest's two sides. "sink PORT" (server pod): accepts and discards, prints "ready".
# "probe HOST PORT DIR PHASES" (client pod): one connection held through every phase; in phase N it waits
# for DIR/go.N, sends 512 KB (so the sock_ops program sees RTT samples), prints "N CAP" (the socket's
# SO_MAX_PACING_RATE, 4294967295 for none) and creates DIR/done.N.
import os
import socket
import sys
import threading
import time

SO_MAX_PACING_RATE = 47


def sink(port):
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("0.0.0.0", port))
    listener.listen(8)
    print("ready", flush=True)

    def drain(conn):
        while conn.recv(1 << 16):
            pass

    while True:
        conn, _ = listener.accept()
        threading.Thread(target=drain, args=(conn,), daemon=True).start()


def probe(host, port, control, phases):
    sock = socket.create_connection((host, port), timeout=30)
    chunk = b"x" * 65536
    for phase in range(1, phases + 1):
        go = os.path.join(control, "go.%d" % phase)
        deadline = time.time() + 120
        while not os.path.exists(go):
            if time.time() > deadline:
                sys.exit("no %s" % go)
            time.sleep(0.05)
        for _ in range(8):
            sock.sendall(chunk)
        cap = sock.getsockopt(socket.SOL_SOCKET, SO_MAX_PACING_RATE) & 0xFFFFFFFF
        print(phase, cap, flush=True)
        open(os.path.join(control, "done.%d" % phase), "w").close()


if sys.argv[1] == "sink":
    sink(int(sys.argv[2]))
else:
    probe(sys.argv[2], int(sys.argv[3]), sys.argv[4], int(sys.argv[5]))
