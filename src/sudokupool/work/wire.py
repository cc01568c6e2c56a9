"""The frames between a serving worker and its work process: a header, then a pickle."""

from __future__ import annotations

import struct
from typing import Final

#: Before a job's pickle ``(function, args)``: its length.
JOB_HEADER: Final = struct.Struct("<I")
#: Before an answer's pickle ``(ok, result or exception)``: its length, and the work process's resident bytes.
ANSWER_HEADER: Final = struct.Struct("<IQ")
