def differs(x_address: int, x_strides: tuple[int, ...], y_address: int, y_strides: tuple[int, ...],
            shape: tuple[int, ...], itemsize: int, /) -> bool: ...

SSE2: int  # 1 where the 4x4 transposed path was compiled in (x86-64), else 0
