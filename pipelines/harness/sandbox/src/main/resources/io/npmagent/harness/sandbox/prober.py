# Probes from inside one pod: every target at once. stdin: {"timeout": s, "targets": [[ip, port, "tcp"|"udp"], ...]}.
# stdout: one [allowed, error] per target. TCP: connected. UDP: the server's echo came back. A timeout is a
# denial (a dropped packet); a refusal or an unreachable network is an error, not a verdict.
import json
import socket
import sys
import threading

request = json.load(sys.stdin)
timeout = request["timeout"]
targets = request["targets"]
results = [None] * len(targets)


def probe(i, ip, port, proto):
    family = socket.AF_INET6 if ":" in ip else socket.AF_INET
    kind = socket.SOCK_STREAM if proto == "tcp" else socket.SOCK_DGRAM
    sock = socket.socket(family, kind)
    sock.settimeout(timeout)
    try:
        sock.connect((ip, port))
        if proto == "udp":
            sock.send(b"npm-agent probe")
            sock.recv(64)
        results[i] = [True, None]
    except socket.timeout:
        results[i] = [False, None]
    except ConnectionRefusedError:
        results[i] = [False, "refused: nothing serves " + proto + "/" + str(port)]
    except OSError as e:
        results[i] = [False, str(e)]
    finally:
        sock.close()


threads = [threading.Thread(target=probe, args=(i, *t)) for i, t in enumerate(targets)]
for t in threads:
    t.start()
for t in threads:
    t.join()
json.dump(results, sys.stdout)
