"""The consistency guard: does a response contradict what the memory knows?"""
