"""redis-py's GET of one key, timed per call: prints the median of 5 rounds of per-call medians in µs.

Usage: redis-get.py PORT KEY ROUNDS (the server on 127.0.0.1, no password)."""
import statistics
import sys
import time

import redis

port, key, rounds = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
client = redis.Redis(host="127.0.0.1", port=port)
medians = []
for _ in range(5):
    times = []
    for _ in range(rounds):
        started = time.perf_counter()
        value = client.get(key)
        times.append((time.perf_counter() - started) * 1e6)
        assert value is not None and len(value) > 200 * 1024
    medians.append(statistics.median(times))
print(f"{statistics.median(medians):.1f}")
