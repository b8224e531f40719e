"""A stand-in for worker.c written from its protocol comment alone, for the client's tests.

It runs models with the CPU ONNX Runtime of this Python and claims every node for
DmlExecutionProvider. Special cases, to drive the client's error paths:

- a model with a ``Unique`` node fails CREATE with ONNX Runtime's fallback text (code 1);
- a RUN input named ``crash`` ends the process (status 3) before replying;
- a RUN input named ``hang`` makes it stop answering;
- a RUN input named ``garbage`` makes it reply with a status that does not exist;
- a RUN input named ``short`` makes it send an OK reply whose payload ends early, one named
  ``extra`` an OK reply with a byte left over;
- a RUN input named ``fail`` gets an error reply (code 2) and the worker lives on;
- ``FAKE_WORKER_PROTOCOL`` in its environment: the protocol version its HELLO answers;
- ``FAKE_WORKER_QUIT=hang`` in its environment: QUIT makes it stop answering, and it ignores
  SIGTERM (a worker whose stack hangs as it ends).
"""

from __future__ import annotations

import os
import signal
import struct
import sys
import time

import numpy as np
import onnx
import onnxruntime as ort

TYPES = {1: "<f4", 2: "u1", 3: "i1", 4: "<u2", 5: "<i2", 6: "<i4", 7: "<i8", 9: "?", 10: "<f2", 11: "<f8",
         12: "<u4", 13: "<u8"}
CODES = {np.dtype(v).str: k for k, v in TYPES.items()}
FALLBACK_TEXT = ("This session contains graph nodes that are assigned to the default CPU EP, "
                 "but fallback to CPU EP has been explicitly disabled by the user.")


class In:
    def __init__(self, data: bytes) -> None:
        self.data, self.at = data, 0

    def take(self, n: int) -> bytes:
        out = self.data[self.at:self.at + n]
        assert len(out) == n, "short request"
        self.at += n
        return out

    def u32(self) -> int:
        return struct.unpack("<I", self.take(4))[0]

    def u64(self) -> int:
        return struct.unpack("<Q", self.take(8))[0]

    def str(self) -> str:
        return self.take(self.u32()).decode()

    def blob(self) -> bytes:
        return self.take(self.u64())


def s(text: str) -> bytes:
    b = text.encode()
    return struct.pack("<I", len(b)) + b


def blob(b: bytes) -> bytes:
    return struct.pack("<Q", len(b)) + b


def main() -> int:
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    sessions: dict[int, tuple[ort.InferenceSession, list[str]]] = {}
    next_id = 1

    def reply(status: int, payload: bytes) -> None:
        stdout.write(struct.pack("<IQ", status, len(payload)) + payload)
        stdout.flush()

    def error(code: int, text: str) -> None:
        reply(1, struct.pack("<I", code) + s(text))

    while True:
        head = stdin.read(12)
        if len(head) < 12:
            return 0
        op, length = struct.unpack("<IQ", head)
        r = In(stdin.read(length))
        if op == 1:  # HELLO
            version = int(os.environ.get("FAKE_WORKER_PROTOCOL", "1"))
            reply(0, struct.pack("<II", 0x57444C4F, version) + s("9.9.9-fake") + struct.pack("<I", 24))
        elif op == 2:  # INFO
            r.u32()
            reply(0, s("9.9.9-fake") + s("fake build") + s("Z:\\fake\\DirectML.dll") + s("1.15.4+fake")
                  + s("") + s("5.1") + s("11_1") + struct.pack("<II", 1, 1) + s("Fake Adapter")
                  + struct.pack("<IIII", 0x10005, 7, 0, 0) + struct.pack("<QQQ", 1 << 30, 0, 1 << 29)
                  + struct.pack("<I", 0))
        elif op == 3:  # CREATE
            provider, level, flags, severity = r.str(), r.u32(), r.u32(), r.u32()
            options = {r.str(): r.str() for _ in range(r.u32())}
            config = {r.str(): r.str() for _ in range(r.u32())}
            model = onnx.load_from_string(r.blob())
            assert r.at == len(r.data), "CREATE has bytes left over"
            del level, severity, options, config
            if any(n.op_type == "Unique" for n in model.graph.node) and not flags & 1:
                error(1, FALLBACK_TEXT)
                continue
            session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
            inputs = [i.name for i in session.get_inputs()]
            outputs = [o.name for o in session.get_outputs()]
            sid, next_id = next_id, next_id + 1
            sessions[sid] = (session, outputs)
            ep = "DmlExecutionProvider" if provider == "DML" else "CPUExecutionProvider"
            nodes = b"".join(s(n.name) + s(n.op_type) + s(ep) for n in model.graph.node)
            placement = (s("") + struct.pack("<I", len(model.graph.node)) + nodes if flags & 2
                         else s("node placement was not asked for") + struct.pack("<I", 0))
            reply(0, struct.pack("<IQ", sid, 1000) + struct.pack("<I", len(inputs)) + b"".join(map(s, inputs))
                  + struct.pack("<I", len(outputs)) + b"".join(map(s, outputs)) + placement)
        elif op == 4:  # RUN
            sid = r.u32()
            feeds = {}
            for _ in range(r.u32()):
                name, code, rank = r.str(), r.u32(), r.u32()
                dims = struct.unpack(f"<{rank}q", r.take(8 * rank))
                feeds[name] = np.frombuffer(r.blob(), dtype=TYPES[code]).reshape(dims)
            names = [r.str() for _ in range(r.u32())]
            assert r.at == len(r.data), "RUN has bytes left over"
            if "crash" in feeds:
                sys.stderr.write("fake worker: crashing as asked\n")
                sys.stderr.flush()
                os._exit(3)
            if "hang" in feeds:
                time.sleep(3600)
            if "garbage" in feeds:
                stdout.write(struct.pack("<IQ", 7, 0))
                stdout.flush()
                continue
            if "fail" in feeds or sid not in sessions:
                error(2, "fake Run failure" if sid in sessions else f"RUN: no session {sid}")
                continue
            if "short" in feeds:
                reply(0, struct.pack("<Q", 2000))  # the output count is missing
                continue
            session, outputs = sessions[sid]
            names = names or outputs
            values = session.run(names, feeds)
            out = struct.pack("<QI", 2000, len(names))
            for name, value in zip(names, values, strict=True):
                value = np.asarray(value, order="C")
                out += (s(name) + struct.pack("<II", CODES[value.dtype.str], value.ndim)
                        + struct.pack(f"<{value.ndim}q", *value.shape) + blob(value.tobytes()))
            reply(0, out + (b"\0" if "extra" in feeds else b""))
        elif op == 5:  # RELEASE
            sid = r.u32()
            if sessions.pop(sid, None) is None:
                error(100, f"RELEASE: no session {sid}")
            else:
                reply(0, b"")
        elif op == 6:  # QUIT
            if os.environ.get("FAKE_WORKER_QUIT") == "hang":
                signal.signal(signal.SIGTERM, signal.SIG_IGN)
                time.sleep(3600)
            reply(0, b"")
            return 0
        else:
            error(100, f"unknown op {op}")


if __name__ == "__main__":
    raise SystemExit(main())
