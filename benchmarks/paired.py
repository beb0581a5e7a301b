"""Ours against a peer for the same call, interleaved round by round.

Each round times both sides back to back (``number`` calls each), so a machine shared with
other work slows both alike; a row reports the medians over the rounds in microseconds per call
and the ratio ours / peer as the median of the rounds' ratios. Times are the process's CPU time
(``time.process_time``), which leaves out the time the process waits for a core.
"""
import time

import numpy as np


def per_call(f, number):
    """CPU seconds per call of f over ``number`` calls."""
    t0 = time.process_time()
    for _ in range(number):
        f()
    return (time.process_time() - t0) / number


def compare(ours, theirs, rounds, number):
    """(ours us, peer us, ratio) of two callables, after one warm-up call each."""
    ours(), theirs()
    a, b = [], []
    for _ in range(rounds):
        a.append(per_call(ours, number))
        b.append(per_call(theirs, number))
    return 1e6 * float(np.median(a)), 1e6 * float(np.median(b)), float(np.median(np.divide(a, b)))


def print_rows(rows, call_width=40, peer="pin"):
    """Print [(robot, call, ours us, peer us, ratio)] as a table."""
    print(f"{'robot':14s} {'call':{call_width}s} {'ours us':>9s} {peer + ' us':>9s} {'ratio':>6s}")
    for robot, call, ours, theirs, ratio in rows:
        print(f"{robot:14s} {call:{call_width}s} {ours:9.2f} {theirs:9.2f} {ratio:6.2f}")
