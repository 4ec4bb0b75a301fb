"""`python -m benchmarks`: every speed figure for each toolchain family (benchmarks.run)."""

from benchmarks.run import main

if __name__ == "__main__":
    main()
