#!/usr/bin/python3
"""The twin lives in python/normlab/twin.py (normlab.to_torch); this path keeps the commands
recorded in docs/ working: it runs that file with the same arguments."""
import os
import runpy

runpy.run_path(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python", "normlab",
                            "twin.py"), run_name="__main__")
