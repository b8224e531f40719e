from typing import Any

def differs(x: Any, y: Any, /) -> bool: ...

SSE2: int  # 1 where the 4x4 transposed path was compiled in (x86-64), else 0
MAX_DIMS: int  # the most axes differs takes
