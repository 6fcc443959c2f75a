"""What every layer uses: the exception tree, the clock, fault points, lazy imports."""
