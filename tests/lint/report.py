"""What the lint scripts end with: each problem on a line, a summary, and
the exit status (1 when there is any problem)."""


def report(problems, summary):
    for p in problems:
        print(p)
    print(summary)
    return 1 if problems else 0
