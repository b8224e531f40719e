/*
 * ort_layouts DirectML worker: a long-lived Windows program (run under Wine on Linux) that runs
 * ONNX models on the ONNX Runtime DirectML execution provider for the Python client
 * (ort_layouts/engine/dml/client.py). One process serves many sessions.
 *
 * Build: x86_64-w64-mingw32-gcc -std=c11 -O2 -o ort_layouts_dml_worker.exe worker.c \
 *            -static -ldxgi -lversion -lole32
 * onnxruntime.dll (and the DirectML.dll it loads) must sit beside the program.
 *
 * PROTOCOL (version 1; keep in sync with the docstring of client.py)
 * ------------------------------------------------------------------
 * Requests arrive on stdin, replies leave on stdout; both are binary. Every integer is
 * little-endian. Payload fields:
 *   u32, u64, i64   fixed-size integers
 *   str             u32 byte length, then that many UTF-8 bytes (no terminator)
 *   blob            u64 byte length, then that many bytes
 *   pairs           u32 count, then count x (str key, str value)
 *
 * Request: u32 op, u64 payload length, payload.
 * Reply:   u32 status (0 ok, 1 error), u64 payload length, payload.
 * Error payload: u32 code (ONNX Runtime's OrtErrorCode, or 100 bad request, 101 worker failure),
 *                str message (ONNX Runtime's status text where it came from ONNX Runtime).
 *
 * op 1 HELLO    request: nothing.
 *               reply:   u32 magic 0x57444C4F ("OLDW"), u32 protocol version, str ORT version,
 *                        u32 ORT API version in use.
 * op 2 INFO     request: u32 adapter index for the Direct3D 12 probe.
 *               reply:   str ORT version, str ORT build info, str DirectML.dll path,
 *                        str DirectML.dll file version, str D3D12 probe error ("" when fine),
 *                        str highest shader model ("6.6", "5.1", "" unknown),
 *                        str highest feature level ("12_1", "11_0", ...),
 *                        u32 typed UAV loads of additional formats (0 no, 1 yes, 2 unknown),
 *                        u32 adapter count, then per DXGI adapter: str description,
 *                        u32 vendor id, u32 device id, u32 subsystem id, u32 revision,
 *                        u64 dedicated video memory, u64 dedicated system memory,
 *                        u64 shared system memory, u32 DXGI_ADAPTER_FLAG bits.
 * op 3 CREATE   request: str provider ("DML", or "CPU" for none: the CPU EP only),
 *                        u32 graph optimization level (0, 1, 2 or 99),
 *                        u32 flags (1 allow CPU fallback, 2 record node placement,
 *                                   4 keep DML graph fusion),
 *                        u32 log severity (0 verbose .. 4 fatal; the log goes to stderr),
 *                        pairs DML provider options (device_id, performance_preference,
 *                              device_filter, disable_metacommands, ...),
 *                        pairs extra session config entries (applied after the defaults),
 *                        blob model (ONNX ModelProto bytes).
 *               reply:   u32 session id, u64 creation time in ns, u32 n then n x str input names,
 *                        u32 n then n x str output names, str placement note ("" when recorded,
 *                        else why not), u32 n then n x (str node name, str op type, str EP name).
 * op 4 RUN      request: u32 session id, u32 n inputs, then per input: str name,
 *                        u32 element type (ONNX TensorProto.DataType), u32 rank, rank x i64 dims,
 *                        blob data (C order, little-endian; bool one byte each);
 *                        u32 n then n x str output names (0: every output, in model order).
 *               reply:   u64 run time in ns, u32 n outputs, then per output: str name,
 *                        u32 element type, u32 rank, rank x i64 dims, blob data.
 * op 5 RELEASE  request: u32 session id.   reply: nothing.
 * op 6 QUIT     request: nothing.          reply: nothing; then the worker exits with status 0.
 * End of input also ends the worker. A failed request leaves the worker serving; a crash ends it
 * (an unhandled exception is reported on stderr and the process exits with status 3).
 *
 * The session defaults: session.disable_cpu_ep_fallback = 1 (unless flag 1),
 * ep.dml.disable_graph_fusion = 1 (unless flag 4), memory pattern off, sequential execution,
 * session.record_ep_graph_assignment_info = 1 (flag 2, ONNX Runtime API >= 24).
 *
 * ONNX Runtime's C API is used without its header: OrtApi is a table of function pointers whose
 * order never changes (new members are appended), so the table is an array of pointers indexed by
 * the positions below, taken from onnxruntime_c_api.h of ONNX Runtime 1.24 (ORT_API_VERSION 24).
 */

#define WIN32_LEAN_AND_MEAN
#define COBJMACROS
#include <windows.h>
#include <dxgi.h>
#include <fcntl.h>
#include <io.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PROTOCOL_VERSION 1u
#define HELLO_MAGIC 0x57444C4Fu

enum { OP_HELLO = 1, OP_INFO = 2, OP_CREATE = 3, OP_RUN = 4, OP_RELEASE = 5, OP_QUIT = 6 };
enum { CODE_BAD_REQUEST = 100, CODE_WORKER = 101 };
enum { FLAG_ALLOW_CPU_FALLBACK = 1, FLAG_RECORD_PLACEMENT = 2, FLAG_KEEP_FUSION = 4 };

/* ---- the parts of ONNX Runtime's C API used here --------------------------------------------- */
#define ORT_CALL __stdcall
typedef void OrtStatus; /* NULL means success */
typedef struct OrtApiBase {
    const void *const *(ORT_CALL *GetApi)(uint32_t version);
    const char *(ORT_CALL *GetVersionString)(void);
} OrtApiBase;

/* Positions in struct OrtApi (ORT_API_VERSION 24). */
enum {
    ORT_GetErrorCode = 1,                       /* since 1 */
    ORT_GetErrorMessage = 2,
    ORT_CreateEnv = 3,
    ORT_CreateSessionFromArray = 8,
    ORT_Run = 9,
    ORT_CreateSessionOptions = 10,
    ORT_SetSessionExecutionMode = 13,
    ORT_DisableMemPattern = 17,
    ORT_SetSessionLogSeverityLevel = 22,
    ORT_SetSessionGraphOptimizationLevel = 23,
    ORT_SessionGetInputCount = 30,
    ORT_SessionGetOutputCount = 31,
    ORT_SessionGetInputName = 36,
    ORT_SessionGetOutputName = 37,
    ORT_CreateTensorWithDataAsOrtValue = 49,
    ORT_GetTensorMutableData = 51,
    ORT_GetTensorElementType = 60,
    ORT_GetDimensionsCount = 61,
    ORT_GetDimensions = 62,
    ORT_GetTensorShapeElementCount = 64,
    ORT_GetTensorTypeAndShape = 65,
    ORT_GetValueType = 67,
    ORT_CreateCpuMemoryInfo = 69,
    ORT_AllocatorFree = 76,
    ORT_GetAllocatorWithDefaultOptions = 78,
    ORT_ReleaseEnv = 92,
    ORT_ReleaseStatus = 93,
    ORT_ReleaseMemoryInfo = 94,
    ORT_ReleaseSession = 95,
    ORT_ReleaseValue = 96,
    ORT_ReleaseTensorTypeAndShapeInfo = 99,
    ORT_ReleaseSessionOptions = 100,
    ORT_AddSessionConfigEntry = 130,            /* since 2 */
    ORT_SessionOptionsAppendExecutionProvider = 216, /* since 12 */
    ORT_GetBuildInfoString = 254,               /* since 15 */
    ORT_Session_GetEpGraphAssignmentInfo = 407, /* since 24 */
    ORT_EpAssignedSubgraph_GetEpName = 408,
    ORT_EpAssignedSubgraph_GetNodes = 409,
    ORT_EpAssignedNode_GetName = 410,
    ORT_EpAssignedNode_GetDomain = 411,
    ORT_EpAssignedNode_GetOperatorType = 412,
};

typedef int(ORT_CALL *GetErrorCode_t)(const OrtStatus *);
typedef const char *(ORT_CALL *GetErrorMessage_t)(const OrtStatus *);
typedef OrtStatus *(ORT_CALL *CreateEnv_t)(int level, const char *logid, void **out);
typedef OrtStatus *(ORT_CALL *CreateSessionFromArray_t)(const void *env, const void *data, size_t len,
                                                         const void *options, void **out);
typedef OrtStatus *(ORT_CALL *Run_t)(void *session, const void *run_options, const char *const *input_names,
                                     const void *const *inputs, size_t n_inputs,
                                     const char *const *output_names, size_t n_outputs, void **outputs);
typedef OrtStatus *(ORT_CALL *CreateSessionOptions_t)(void **out);
typedef OrtStatus *(ORT_CALL *OptionsInt_t)(void *options, int value);
typedef OrtStatus *(ORT_CALL *OptionsOnly_t)(void *options);
typedef OrtStatus *(ORT_CALL *SessionCount_t)(const void *session, size_t *out);
typedef OrtStatus *(ORT_CALL *SessionName_t)(const void *session, size_t index, void *allocator, char **out);
typedef OrtStatus *(ORT_CALL *CreateTensorWithData_t)(const void *info, void *data, size_t len, const int64_t *shape,
                                                       size_t rank, int type, void **out);
typedef OrtStatus *(ORT_CALL *GetTensorMutableData_t)(void *value, void **out);
typedef OrtStatus *(ORT_CALL *GetTensorElementType_t)(const void *info, int *out);
typedef OrtStatus *(ORT_CALL *GetDimensionsCount_t)(const void *info, size_t *out);
typedef OrtStatus *(ORT_CALL *GetDimensions_t)(const void *info, int64_t *dims, size_t n);
typedef OrtStatus *(ORT_CALL *GetTensorShapeElementCount_t)(const void *info, size_t *out);
typedef OrtStatus *(ORT_CALL *GetTensorTypeAndShape_t)(const void *value, void **out);
typedef OrtStatus *(ORT_CALL *GetValueType_t)(const void *value, int *out);
typedef OrtStatus *(ORT_CALL *CreateCpuMemoryInfo_t)(int allocator_type, int mem_type, void **out);
typedef OrtStatus *(ORT_CALL *AllocatorFree_t)(void *allocator, void *p);
typedef OrtStatus *(ORT_CALL *GetAllocatorWithDefaultOptions_t)(void **out);
typedef void(ORT_CALL *Release_t)(void *);
typedef OrtStatus *(ORT_CALL *AddSessionConfigEntry_t)(void *options, const char *key, const char *value);
typedef OrtStatus *(ORT_CALL *AppendExecutionProvider_t)(void *options, const char *name, const char *const *keys,
                                                          const char *const *values, size_t n);
typedef const char *(ORT_CALL *GetBuildInfoString_t)(void);
typedef OrtStatus *(ORT_CALL *GetEpGraphAssignmentInfo_t)(const void *session, const void *const **subgraphs,
                                                           size_t *n);
typedef OrtStatus *(ORT_CALL *GetString_t)(const void *object, const char **out);
typedef OrtStatus *(ORT_CALL *GetNodes_t)(const void *subgraph, const void *const **nodes, size_t *n);
typedef OrtStatus *(ORT_CALL *AppendDml_t)(void *options, int device_id);

#define API(name, type) ((type)ort_api[ORT_##name])

static const void *const *ort_api;
static uint32_t ort_api_version;
static const char *ort_version = "";
static void *ort_env;
static void *ort_cpu_memory;
static AppendDml_t append_dml_legacy; /* OrtSessionOptionsAppendExecutionProvider_DML, exported */
static char ort_load_error[512];
static wchar_t exe_dir[MAX_PATH];

/* ---- errors ---------------------------------------------------------------------------------- */
static uint32_t err_code;
static char err_text[8192];

static int fail(uint32_t code, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    err_code = code;
    vsnprintf(err_text, sizeof err_text, fmt, ap);
    va_end(ap);
    return -1;
}

/* 0 when status is success; else records ONNX Runtime's code and text, releases the status, -1. */
static int ort_check(OrtStatus *status, const char *what) {
    if (status == NULL) return 0;
    int code = API(GetErrorCode, GetErrorCode_t)(status);
    const char *msg = API(GetErrorMessage, GetErrorMessage_t)(status);
    err_code = (uint32_t)code;
    if (what && *what)
        snprintf(err_text, sizeof err_text, "%s", msg ? msg : what);
    else
        snprintf(err_text, sizeof err_text, "%s", msg ? msg : "(no message)");
    API(ReleaseStatus, Release_t)(status);
    return -1;
}
#define ORT_TRY(call, what) do { if (ort_check((call), (what))) goto done; } while (0)

/* ---- byte buffers ---------------------------------------------------------------------------- */
typedef struct { uint8_t *p; size_t len, cap; int oom; } Buf;

static void put(Buf *b, const void *data, size_t n) {
    if (b->oom) return;
    if (b->len + n > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->len + n) cap *= 2;
        uint8_t *p = realloc(b->p, cap);
        if (!p) { b->oom = 1; return; }
        b->p = p;
        b->cap = cap;
    }
    if (n) memcpy(b->p + b->len, data, n);
    b->len += n;
}
static void put_u32(Buf *b, uint32_t v) { put(b, &v, 4); }
static void put_u64(Buf *b, uint64_t v) { put(b, &v, 8); }
static void put_i64(Buf *b, int64_t v) { put(b, &v, 8); }
static void put_str(Buf *b, const char *s) {
    size_t n = s ? strlen(s) : 0;
    put_u32(b, (uint32_t)n);
    put(b, s, n);
}
static void put_blob(Buf *b, const void *data, uint64_t n) {
    put_u64(b, n);
    put(b, data, (size_t)n);
}

typedef struct { const uint8_t *p; size_t left; int bad; } Rd;

static const uint8_t *take(Rd *r, size_t n) {
    if (r->bad || r->left < n) { r->bad = 1; return NULL; }
    const uint8_t *p = r->p;
    r->p += n;
    r->left -= n;
    return p;
}
static uint32_t get_u32(Rd *r) { uint32_t v = 0; const uint8_t *p = take(r, 4); if (p) memcpy(&v, p, 4); return v; }
static uint64_t get_u64(Rd *r) { uint64_t v = 0; const uint8_t *p = take(r, 8); if (p) memcpy(&v, p, 8); return v; }
static int64_t get_i64(Rd *r) { int64_t v = 0; const uint8_t *p = take(r, 8); if (p) memcpy(&v, p, 8); return v; }

/* Strings of one request live in a scratch list freed after the reply. */
static void **scratch;
static size_t scratch_len, scratch_cap;

static void *scratch_alloc(size_t n) {
    void *p = calloc(1, n ? n : 1);
    if (!p) return NULL;
    if (scratch_len == scratch_cap) {
        size_t cap = scratch_cap ? scratch_cap * 2 : 64;
        void **grown = realloc(scratch, cap * sizeof *grown);
        if (!grown) { free(p); return NULL; }
        scratch = grown;
        scratch_cap = cap;
    }
    scratch[scratch_len++] = p;
    return p;
}
static void scratch_free(void) {
    for (size_t i = 0; i < scratch_len; i++) free(scratch[i]);
    scratch_len = 0;
}
static char *get_str(Rd *r) {
    uint32_t n = get_u32(r);
    const uint8_t *p = take(r, n);
    if (!p) return NULL;
    char *s = scratch_alloc((size_t)n + 1);
    if (!s) { r->bad = 1; return NULL; }
    memcpy(s, p, n);
    return s;
}
static const uint8_t *get_blob(Rd *r, uint64_t *n) {
    *n = get_u64(r);
    if (*n > r->left) { r->bad = 1; return NULL; }
    return take(r, (size_t)*n);
}

/* ---- pipes ----------------------------------------------------------------------------------- */
static int proto_in = 0;
static int proto_out = 1;

static int read_all(void *dst, size_t n) {
    uint8_t *p = dst;
    while (n) {
        unsigned chunk = n > (1u << 30) ? (1u << 30) : (unsigned)n;
        int got = _read(proto_in, p, chunk);
        if (got <= 0) return -1;
        p += got;
        n -= (size_t)got;
    }
    return 0;
}
static int write_all(const void *src, size_t n) {
    const uint8_t *p = src;
    while (n) {
        unsigned chunk = n > (1u << 30) ? (1u << 30) : (unsigned)n;
        int put_n = _write(proto_out, p, chunk);
        if (put_n <= 0) return -1;
        p += put_n;
        n -= (size_t)put_n;
    }
    return 0;
}
static int reply(uint32_t status, const Buf *payload) {
    uint8_t head[12];
    uint64_t n = payload ? payload->len : 0;
    memcpy(head, &status, 4);
    memcpy(head + 4, &n, 8);
    if (write_all(head, sizeof head)) return -1;
    if (n && write_all(payload->p, (size_t)n)) return -1;
    return 0;
}
static int reply_error(void) {
    Buf b = {0};
    put_u32(&b, err_code);
    put_str(&b, err_text);
    int rc = reply(1, &b);
    free(b.p);
    return rc;
}

/* ---- helpers --------------------------------------------------------------------------------- */
static uint64_t now_ns(void) {
    static LARGE_INTEGER freq;
    LARGE_INTEGER t;
    if (!freq.QuadPart) QueryPerformanceFrequency(&freq);
    QueryPerformanceCounter(&t);
    return (uint64_t)((double)t.QuadPart * 1e9 / (double)freq.QuadPart);
}

static void utf8_of(const wchar_t *w, char *out, int size) {
    out[0] = 0;
    if (!WideCharToMultiByte(CP_UTF8, 0, w, -1, out, size, NULL, NULL)) out[0] = 0;
}

/* Bytes of n elements of an ONNX element type; -1 for types without a fixed-size layout. */
static int64_t element_bytes(uint32_t type, uint64_t n) {
    switch (type) {
    case 2: case 3: case 9: case 17: case 18: case 19: case 20: return (int64_t)n;    /* 8-bit */
    case 4: case 5: case 10: case 16: return (int64_t)(2 * n);                          /* 16-bit */
    case 1: case 6: case 12: return (int64_t)(4 * n);                                   /* 32-bit */
    case 7: case 11: case 13: case 14: return (int64_t)(8 * n);                         /* 64-bit */
    case 15: return (int64_t)(16 * n);                                                  /* complex128 */
    case 21: case 22: case 23: return (int64_t)((n + 1) / 2);                           /* 4-bit */
    case 24: case 25: return (int64_t)((n + 3) / 4);                                    /* 2-bit */
    default: return -1;                                                                 /* string, ... */
    }
}

static void file_version(const wchar_t *path, char *out, int size) {
    out[0] = 0;
    DWORD ignored = 0, n = GetFileVersionInfoSizeW(path, &ignored);
    if (!n) return;
    void *data = malloc(n);
    if (!data) return;
    if (GetFileVersionInfoW(path, 0, n, data)) {
        struct { WORD lang, codepage; } *tr = NULL;
        UINT len = 0;
        if (VerQueryValueW(data, L"\\VarFileInfo\\Translation", (void **)&tr, &len) && tr && len >= 4) {
            wchar_t key[64];
            wchar_t *value = NULL;
            _snwprintf(key, 64, L"\\StringFileInfo\\%04x%04x\\FileVersion", tr->lang, tr->codepage);
            if (VerQueryValueW(data, key, (void **)&value, &len) && value && len) utf8_of(value, out, size);
        }
        VS_FIXEDFILEINFO *fixed = NULL;
        if (!out[0] && VerQueryValueW(data, L"\\", (void **)&fixed, &len) && fixed)
            snprintf(out, size, "%lu.%lu.%lu.%lu", (unsigned long)HIWORD(fixed->dwFileVersionMS),
                     (unsigned long)LOWORD(fixed->dwFileVersionMS), (unsigned long)HIWORD(fixed->dwFileVersionLS),
                     (unsigned long)LOWORD(fixed->dwFileVersionLS));
    }
    free(data);
}

/* ---- loading ONNX Runtime ------------------------------------------------------------------- */
static void load_ort(void) {
    wchar_t path[MAX_PATH + 32];
    _snwprintf(path, MAX_PATH + 32, L"%ls\\onnxruntime.dll", exe_dir);
    HMODULE dll = LoadLibraryExW(path, NULL, LOAD_WITH_ALTERED_SEARCH_PATH);
    if (!dll) {
        snprintf(ort_load_error, sizeof ort_load_error, "cannot load onnxruntime.dll beside the worker (error %lu)",
                 (unsigned long)GetLastError());
        return;
    }
    typedef const OrtApiBase *(ORT_CALL * GetApiBase_t)(void);
    GetApiBase_t get_base = (GetApiBase_t)(void *)GetProcAddress(dll, "OrtGetApiBase");
    if (!get_base) {
        snprintf(ort_load_error, sizeof ort_load_error, "onnxruntime.dll exports no OrtGetApiBase");
        return;
    }
    const OrtApiBase *base = get_base();
    ort_version = base->GetVersionString();
    for (uint32_t v = 24; v >= 13 && !ort_api; v--) {
        ort_api = base->GetApi(v);
        if (ort_api) ort_api_version = v;
    }
    if (!ort_api) {
        snprintf(ort_load_error, sizeof ort_load_error, "ONNX Runtime %s offers none of the C API versions 13..24",
                 ort_version);
        return;
    }
    /* Keep DirectML and the Direct3D 12 stack loaded for the life of the process. Under Wine,
       when the last D3D12 device goes away (the first DML session of a process refused because
       of an unsupported node with CPU fallback off), winevulkan.dll is unloaded while a thread
       still runs code in it, and the process crashes. The Wine modules are absent on Windows. */
    _snwprintf(path, MAX_PATH + 32, L"%ls\\DirectML.dll", exe_dir);
    const wchar_t *pinned[] = {path, L"d3d12.dll", L"dxgi.dll", L"wined3d.dll", L"winevulkan.dll"};
    for (size_t i = 0; i < sizeof pinned / sizeof pinned[0]; i++) {
        HMODULE m = LoadLibraryExW(pinned[i], NULL, i == 0 ? LOAD_WITH_ALTERED_SEARCH_PATH : 0);
        if (m) GetModuleHandleExW(GET_MODULE_HANDLE_EX_FLAG_PIN, pinned[i], &m);
    }
    append_dml_legacy = (AppendDml_t)(void *)GetProcAddress(dll, "OrtSessionOptionsAppendExecutionProvider_DML");
    if (ort_check(API(CreateEnv, CreateEnv_t)(2 /* warning */, "ort_layouts", &ort_env), "CreateEnv") ||
        ort_check(API(CreateCpuMemoryInfo, CreateCpuMemoryInfo_t)(0 /* device allocator */, 0, &ort_cpu_memory),
                  "CreateCpuMemoryInfo")) {
        snprintf(ort_load_error, sizeof ort_load_error, "%s", err_text);
        ort_api = NULL;
    }
}

/* ---- sessions -------------------------------------------------------------------------------- */
typedef struct {
    uint32_t id;
    void *session;
    size_t n_out;
    char **out_names;
} Session;

static Session *sessions;
static size_t n_sessions, cap_sessions;
static uint32_t next_session_id = 1;

static Session *find_session(uint32_t id) {
    for (size_t i = 0; i < n_sessions; i++)
        if (sessions[i].id == id) return &sessions[i];
    return NULL;
}

static void free_names(char **names, size_t n) {
    if (!names) return;
    for (size_t i = 0; i < n; i++) free(names[i]);
    free(names);
}

/* The session's input or output names, copied (malloc). */
static int session_names(void *session, int outputs, char ***names_out, size_t *n_out) {
    void *allocator = NULL;
    size_t n = 0;
    char **names = NULL;
    *names_out = NULL;
    *n_out = 0;
    if (ort_check(API(GetAllocatorWithDefaultOptions, GetAllocatorWithDefaultOptions_t)(&allocator), NULL)) return -1;
    SessionCount_t count = outputs ? API(SessionGetOutputCount, SessionCount_t) : API(SessionGetInputCount, SessionCount_t);
    SessionName_t name = outputs ? API(SessionGetOutputName, SessionName_t) : API(SessionGetInputName, SessionName_t);
    if (ort_check(count(session, &n), NULL)) return -1;
    names = calloc(n ? n : 1, sizeof *names);
    if (!names) return fail(CODE_WORKER, "out of memory");
    for (size_t i = 0; i < n; i++) {
        char *s = NULL;
        if (ort_check(name(session, i, allocator, &s), NULL)) { free_names(names, i); return -1; }
        names[i] = _strdup(s);
        API(AllocatorFree, AllocatorFree_t)(allocator, s);
    }
    *names_out = names;
    *n_out = n;
    return 0;
}

/* Appends the placement part of a CREATE reply: note, then (node, op type, EP) triples. */
static void put_placement(Buf *b, void *session, int recorded) {
    if (!recorded) {
        put_str(b, ort_api_version < 24 ? "this ONNX Runtime records no node placement (C API < 24)"
                                        : "node placement was not asked for");
        put_u32(b, 0);
        return;
    }
    const void *const *subgraphs = NULL;
    size_t n_subgraphs = 0;
    if (ort_check(API(Session_GetEpGraphAssignmentInfo, GetEpGraphAssignmentInfo_t)(session, &subgraphs, &n_subgraphs),
                  NULL)) {
        put_str(b, err_text);
        put_u32(b, 0);
        return;
    }
    Buf triples = {0};
    uint32_t n_nodes = 0;
    for (size_t i = 0; i < n_subgraphs; i++) {
        const char *ep = NULL;
        const void *const *nodes = NULL;
        size_t n = 0;
        if (ort_check(API(EpAssignedSubgraph_GetEpName, GetString_t)(subgraphs[i], &ep), NULL)) continue;
        if (ort_check(API(EpAssignedSubgraph_GetNodes, GetNodes_t)(subgraphs[i], &nodes, &n), NULL)) continue;
        for (size_t j = 0; j < n; j++) {
            const char *node_name = NULL, *op = NULL;
            if (ort_check(API(EpAssignedNode_GetName, GetString_t)(nodes[j], &node_name), NULL)) node_name = "";
            if (ort_check(API(EpAssignedNode_GetOperatorType, GetString_t)(nodes[j], &op), NULL)) op = "";
            put_str(&triples, node_name);
            put_str(&triples, op);
            put_str(&triples, ep);
            n_nodes++;
        }
    }
    put_str(b, "");
    put_u32(b, n_nodes);
    put(b, triples.p, triples.len);
    free(triples.p);
}

static int op_create(Rd *r, Buf *out) {
    char *provider = get_str(r);
    uint32_t level = get_u32(r), flags = get_u32(r), severity = get_u32(r);
    uint32_t n_options = get_u32(r);
    if (r->bad || n_options > 256) return fail(CODE_BAD_REQUEST, "CREATE: malformed request");
    const char **keys = scratch_alloc(sizeof(char *) * (n_options + 1));
    const char **values = scratch_alloc(sizeof(char *) * (n_options + 1));
    if (!keys || !values) return fail(CODE_WORKER, "out of memory");
    for (uint32_t i = 0; i < n_options; i++) {
        keys[i] = get_str(r);
        values[i] = get_str(r);
    }
    uint32_t n_config = get_u32(r);
    if (r->bad || n_config > 256) return fail(CODE_BAD_REQUEST, "CREATE: malformed request");
    const char **config_keys = scratch_alloc(sizeof(char *) * (n_config + 1));
    const char **config_values = scratch_alloc(sizeof(char *) * (n_config + 1));
    if (!config_keys || !config_values) return fail(CODE_WORKER, "out of memory");
    for (uint32_t i = 0; i < n_config; i++) {
        config_keys[i] = get_str(r);
        config_values[i] = get_str(r);
    }
    uint64_t model_len = 0;
    const uint8_t *model = get_blob(r, &model_len);
    if (r->bad || !provider) return fail(CODE_BAD_REQUEST, "CREATE: malformed request");
    int dml = strcmp(provider, "DML") == 0;
    if (!dml && strcmp(provider, "CPU") != 0)
        return fail(CODE_BAD_REQUEST, "CREATE: provider '%s' is not one of 'DML', 'CPU'", provider);
    if (level != 0 && level != 1 && level != 2 && level != 99)
        return fail(CODE_BAD_REQUEST, "CREATE: graph optimization level %u is not one of 0, 1, 2, 99", level);

    int rc = -1;
    void *options = NULL, *session = NULL;
    uint64_t start = now_ns();
    ORT_TRY(API(CreateSessionOptions, CreateSessionOptions_t)(&options), NULL);
    ORT_TRY(API(SetSessionGraphOptimizationLevel, OptionsInt_t)(options, (int)level), NULL);
    ORT_TRY(API(SetSessionExecutionMode, OptionsInt_t)(options, 0 /* sequential */), NULL);
    ORT_TRY(API(DisableMemPattern, OptionsOnly_t)(options), NULL);
    ORT_TRY(API(SetSessionLogSeverityLevel, OptionsInt_t)(options, (int)(severity > 4 ? 4 : severity)), NULL);
    ORT_TRY(API(AddSessionConfigEntry, AddSessionConfigEntry_t)(
                options, "session.disable_cpu_ep_fallback", (flags & FLAG_ALLOW_CPU_FALLBACK) ? "0" : "1"), NULL);
    if (dml && !(flags & FLAG_KEEP_FUSION))
        ORT_TRY(API(AddSessionConfigEntry, AddSessionConfigEntry_t)(options, "ep.dml.disable_graph_fusion", "1"), NULL);
    int record = (flags & FLAG_RECORD_PLACEMENT) && ort_api_version >= 24;
    if (record)
        ORT_TRY(API(AddSessionConfigEntry, AddSessionConfigEntry_t)(
                    options, "session.record_ep_graph_assignment_info", "1"), NULL);
    for (uint32_t i = 0; i < n_config; i++)
        ORT_TRY(API(AddSessionConfigEntry, AddSessionConfigEntry_t)(options, config_keys[i], config_values[i]), NULL);
    if (dml) {
        OrtStatus *st = API(SessionOptionsAppendExecutionProvider, AppendExecutionProvider_t)(
            options, "DML", keys, values, n_options);
        if (st && append_dml_legacy) {
            /* an ONNX Runtime whose generic registration does not know DML: device_id only */
            int device_id = 0, other = 0;
            for (uint32_t i = 0; i < n_options; i++) {
                if (strcmp(keys[i], "device_id") == 0) device_id = atoi(values[i]);
                else other = 1;
            }
            if (!other) {
                API(ReleaseStatus, Release_t)(st);
                st = append_dml_legacy(options, device_id);
            }
        }
        ORT_TRY(st, NULL);
    }
    ORT_TRY(API(CreateSessionFromArray, CreateSessionFromArray_t)(ort_env, model, (size_t)model_len, options, &session),
            NULL);
    uint64_t create_ns = now_ns() - start;

    char **in_names = NULL, **out_names = NULL;
    size_t n_in = 0, n_out = 0;
    if (session_names(session, 0, &in_names, &n_in) || session_names(session, 1, &out_names, &n_out)) {
        free_names(in_names, n_in);
        goto done;
    }
    if (n_sessions == cap_sessions) {
        size_t cap = cap_sessions ? cap_sessions * 2 : 16;
        Session *grown = realloc(sessions, cap * sizeof *grown);
        if (!grown) {
            free_names(in_names, n_in);
            free_names(out_names, n_out);
            fail(CODE_WORKER, "out of memory");
            goto done;
        }
        sessions = grown;
        cap_sessions = cap;
    }
    Session *s = &sessions[n_sessions++];
    s->id = next_session_id++;
    s->session = session;
    s->n_out = n_out;
    s->out_names = out_names;
    session = NULL;

    put_u32(out, s->id);
    put_u64(out, create_ns);
    put_u32(out, (uint32_t)n_in);
    for (size_t i = 0; i < n_in; i++) put_str(out, in_names[i]);
    put_u32(out, (uint32_t)n_out);
    for (size_t i = 0; i < n_out; i++) put_str(out, out_names[i]);
    put_placement(out, s->session, record);
    free_names(in_names, n_in);
    rc = 0;
done:
    if (session) API(ReleaseSession, Release_t)(session);
    if (options) API(ReleaseSessionOptions, Release_t)(options);
    return rc;
}

static int op_run(Rd *r, Buf *out) {
    uint32_t id = get_u32(r);
    uint32_t n_in = get_u32(r);
    if (r->bad || n_in > 65536) return fail(CODE_BAD_REQUEST, "RUN: malformed request");
    Session *s = find_session(id);
    if (!s) return fail(CODE_BAD_REQUEST, "RUN: no session %u", id);

    int rc = -1;
    const char **in_names = scratch_alloc(sizeof(char *) * (n_in + 1));
    void **in_values = scratch_alloc(sizeof(void *) * (n_in + 1));
    void **in_data = scratch_alloc(sizeof(void *) * (n_in + 1));
    const char **out_names = NULL;
    void **outputs = NULL;
    uint32_t n_out = 0;
    if (!in_names || !in_values || !in_data) return fail(CODE_WORKER, "out of memory");
    for (uint32_t i = 0; i < n_in; i++) {
        in_names[i] = get_str(r);
        uint32_t type = get_u32(r), rank = get_u32(r);
        if (r->bad || rank > 64) { fail(CODE_BAD_REQUEST, "RUN: malformed input %u", i); goto done; }
        int64_t *dims = scratch_alloc(sizeof(int64_t) * (rank + 1));
        if (!dims) { fail(CODE_WORKER, "out of memory"); goto done; }
        uint64_t count = 1;
        for (uint32_t d = 0; d < rank; d++) {
            dims[d] = get_i64(r);
            if (dims[d] < 0) { fail(CODE_BAD_REQUEST, "RUN: input '%s' has a negative dimension", in_names[i]); goto done; }
            count *= (uint64_t)dims[d];
        }
        uint64_t len = 0;
        const uint8_t *data = get_blob(r, &len);
        if (r->bad) { fail(CODE_BAD_REQUEST, "RUN: malformed input %u", i); goto done; }
        int64_t want = element_bytes(type, count);
        if (want < 0) { fail(CODE_BAD_REQUEST, "RUN: input '%s' has element type %u, which has no fixed size", in_names[i], type); goto done; }
        if ((uint64_t)want != len) {
            fail(CODE_BAD_REQUEST, "RUN: input '%s' has %llu bytes, its shape needs %lld", in_names[i],
                 (unsigned long long)len, (long long)want);
            goto done;
        }
        in_data[i] = _aligned_malloc(len ? (size_t)len : 64, 64);
        if (!in_data[i]) { fail(CODE_WORKER, "out of memory"); goto done; }
        if (len) memcpy(in_data[i], data, (size_t)len);
        ORT_TRY(API(CreateTensorWithDataAsOrtValue, CreateTensorWithData_t)(
                    ort_cpu_memory, in_data[i], (size_t)len, dims, rank, (int)type, &in_values[i]), NULL);
    }
    n_out = get_u32(r);
    if (r->bad || n_out > 65536) { fail(CODE_BAD_REQUEST, "RUN: malformed request"); goto done; }
    if (n_out == 0) {
        n_out = (uint32_t)s->n_out;
        out_names = (const char **)s->out_names;
    } else {
        out_names = scratch_alloc(sizeof(char *) * (n_out + 1));
        if (!out_names) { fail(CODE_WORKER, "out of memory"); goto done; }
        for (uint32_t i = 0; i < n_out; i++) out_names[i] = get_str(r);
        if (r->bad) { fail(CODE_BAD_REQUEST, "RUN: malformed output names"); goto done; }
    }
    outputs = scratch_alloc(sizeof(void *) * (n_out + 1));
    if (!outputs) { fail(CODE_WORKER, "out of memory"); goto done; }

    uint64_t start = now_ns();
    ORT_TRY(API(Run, Run_t)(s->session, NULL, in_names, (const void *const *)in_values, n_in, out_names, n_out, outputs),
            NULL);
    uint64_t run_ns = now_ns() - start;

    put_u64(out, run_ns);
    put_u32(out, n_out);
    for (uint32_t i = 0; i < n_out; i++) {
        int value_type = 0, type = 0;
        void *info = NULL, *data = NULL;
        size_t rank = 0, count = 0;
        ORT_TRY(API(GetValueType, GetValueType_t)(outputs[i], &value_type), NULL);
        if (value_type != 1) { fail(CODE_WORKER, "output '%s' is not a tensor (ONNXType %d)", out_names[i], value_type); goto done; }
        ORT_TRY(API(GetTensorTypeAndShape, GetTensorTypeAndShape_t)(outputs[i], &info), NULL);
        int bad = ort_check(API(GetTensorElementType, GetTensorElementType_t)(info, &type), NULL) ||
                  ort_check(API(GetDimensionsCount, GetDimensionsCount_t)(info, &rank), NULL);
        int64_t *dims = bad ? NULL : scratch_alloc(sizeof(int64_t) * (rank + 1));
        if (!bad && !dims) bad = fail(CODE_WORKER, "out of memory");
        if (!bad) bad = ort_check(API(GetDimensions, GetDimensions_t)(info, dims, rank), NULL) ||
                        ort_check(API(GetTensorShapeElementCount, GetTensorShapeElementCount_t)(info, &count), NULL);
        API(ReleaseTensorTypeAndShapeInfo, Release_t)(info);
        if (bad) goto done;
        int64_t bytes = element_bytes((uint32_t)type, count);
        if (bytes < 0) { fail(CODE_WORKER, "output '%s' has element type %d, which has no fixed size", out_names[i], type); goto done; }
        if (bytes) ORT_TRY(API(GetTensorMutableData, GetTensorMutableData_t)(outputs[i], &data), NULL);
        put_str(out, out_names[i]);
        put_u32(out, (uint32_t)type);
        put_u32(out, (uint32_t)rank);
        for (size_t d = 0; d < rank; d++) put_i64(out, dims[d]);
        put_blob(out, data, (uint64_t)bytes);
    }
    rc = 0;
done:
    for (uint32_t i = 0; outputs && i < n_out; i++)
        if (outputs[i]) API(ReleaseValue, Release_t)(outputs[i]);
    for (uint32_t i = 0; i < n_in; i++) {
        if (in_values[i]) API(ReleaseValue, Release_t)(in_values[i]);
        if (in_data[i]) _aligned_free(in_data[i]);
    }
    return rc;
}

static int op_release(Rd *r) {
    uint32_t id = get_u32(r);
    if (r->bad) return fail(CODE_BAD_REQUEST, "RELEASE: malformed request");
    for (size_t i = 0; i < n_sessions; i++) {
        if (sessions[i].id != id) continue;
        API(ReleaseSession, Release_t)(sessions[i].session);
        free_names(sessions[i].out_names, sessions[i].n_out);
        sessions[i] = sessions[--n_sessions];
        return 0;
    }
    return fail(CODE_BAD_REQUEST, "RELEASE: no session %u", id);
}

/* ---- INFO: versions and the adapter ---------------------------------------------------------- */
static const GUID iid_dxgi_factory1 = {0x770aae78, 0xf26f, 0x4dba, {0xa8, 0x29, 0x25, 0x3c, 0x83, 0xd1, 0xb3, 0x87}};
static const GUID iid_d3d12_device = {0x189819f1, 0x1db6, 0x4b57, {0xbe, 0x54, 0x18, 0x21, 0x33, 0x9b, 0x85, 0xf7}};

/* ID3D12Device methods by vtable slot: IUnknown 0-2, ID3D12Object 3-6, GetNodeCount 7, ..., 13. */
enum { VT_RELEASE = 2, VT_CHECK_FEATURE_SUPPORT = 13 };
enum { FEATURE_D3D12_OPTIONS = 0, FEATURE_FEATURE_LEVELS = 2, FEATURE_SHADER_MODEL = 7 };
typedef HRESULT(WINAPI *CreateDevice_t)(IUnknown *adapter, int min_level, REFIID iid, void **out);
typedef HRESULT(STDMETHODCALLTYPE *CheckFeature_t)(void *device, int feature, void *data, UINT size);
typedef ULONG(STDMETHODCALLTYPE *ReleaseCom_t)(void *object);

typedef struct {
    char error[256], shader_model[16], feature_level[16];
    uint32_t typed_uav_loads;
} D3d12Probe;

static void probe_d3d12(IDXGIAdapter1 *adapter, D3d12Probe *p) {
    p->typed_uav_loads = 2;
    HMODULE dll = LoadLibraryW(L"d3d12.dll");
    CreateDevice_t create = dll ? (CreateDevice_t)(void *)GetProcAddress(dll, "D3D12CreateDevice") : NULL;
    if (!create) { snprintf(p->error, sizeof p->error, "d3d12.dll has no D3D12CreateDevice"); return; }
    void *device = NULL;
    HRESULT hr = create((IUnknown *)adapter, 0xb000 /* 11_0 */, &iid_d3d12_device, &device);
    if (FAILED(hr) || !device) {
        snprintf(p->error, sizeof p->error, "D3D12CreateDevice failed: 0x%08lx", (unsigned long)hr);
        return;
    }
    void **vtbl = *(void ***)device;
    CheckFeature_t check = (CheckFeature_t)vtbl[VT_CHECK_FEATURE_SUPPORT];
    static const int levels[] = {0x9100, 0x9200, 0x9300, 0xa000, 0xa100, 0xb000, 0xb100, 0xc000, 0xc100, 0xc200};
    struct { UINT n; const int *requested; int max_level; } fl = {sizeof levels / sizeof levels[0], levels, 0};
    if (SUCCEEDED(check(device, FEATURE_FEATURE_LEVELS, &fl, sizeof fl)))
        snprintf(p->feature_level, sizeof p->feature_level, "%d_%d", (fl.max_level >> 12) & 0xf, (fl.max_level >> 8) & 0xf);
    static const int models[] = {0x69, 0x68, 0x67, 0x66, 0x65, 0x64, 0x63, 0x62, 0x61, 0x60, 0x51};
    for (size_t i = 0; i < sizeof models / sizeof models[0]; i++) {
        int sm = models[i];
        if (SUCCEEDED(check(device, FEATURE_SHADER_MODEL, &sm, sizeof sm))) {
            snprintf(p->shader_model, sizeof p->shader_model, "%d.%d", (sm >> 4) & 0xf, sm & 0xf);
            break;
        }
    }
    UINT options[15] = {0}; /* D3D12_FEATURE_DATA_D3D12_OPTIONS; TypedUAVLoadAdditionalFormats is field 6 */
    if (SUCCEEDED(check(device, FEATURE_D3D12_OPTIONS, options, sizeof options))) p->typed_uav_loads = options[6] ? 1 : 0;
    ((ReleaseCom_t)vtbl[VT_RELEASE])(device);
}

static int op_info(Rd *r, Buf *out) {
    uint32_t probe_index = get_u32(r);
    if (r->bad) return fail(CODE_BAD_REQUEST, "INFO: malformed request");
    wchar_t dml_path[MAX_PATH + 32];
    HMODULE loaded = GetModuleHandleW(L"DirectML.dll");
    if (!loaded || !GetModuleFileNameW(loaded, dml_path, MAX_PATH))
        _snwprintf(dml_path, MAX_PATH + 32, L"%ls\\DirectML.dll", exe_dir);
    char dml_path8[MAX_PATH * 3], dml_version[128];
    utf8_of(dml_path, dml_path8, sizeof dml_path8);
    file_version(dml_path, dml_version, sizeof dml_version);

    Buf adapters = {0};
    uint32_t n_adapters = 0;
    D3d12Probe probe = {{0}, {0}, {0}, 2};
    IDXGIFactory1 *factory = NULL;
    HRESULT hr = CreateDXGIFactory1(&iid_dxgi_factory1, (void **)&factory);
    if (FAILED(hr)) {
        snprintf(probe.error, sizeof probe.error, "CreateDXGIFactory1 failed: 0x%08lx", (unsigned long)hr);
    } else {
        IDXGIAdapter1 *adapter = NULL;
        for (UINT i = 0; IDXGIFactory1_EnumAdapters1(factory, i, &adapter) != DXGI_ERROR_NOT_FOUND; i++) {
            DXGI_ADAPTER_DESC1 desc;
            memset(&desc, 0, sizeof desc);
            if (SUCCEEDED(IDXGIAdapter1_GetDesc1(adapter, &desc))) {
                char name[512];
                utf8_of(desc.Description, name, sizeof name);
                put_str(&adapters, name);
                put_u32(&adapters, desc.VendorId);
                put_u32(&adapters, desc.DeviceId);
                put_u32(&adapters, desc.SubSysId);
                put_u32(&adapters, desc.Revision);
                put_u64(&adapters, desc.DedicatedVideoMemory);
                put_u64(&adapters, desc.DedicatedSystemMemory);
                put_u64(&adapters, desc.SharedSystemMemory);
                put_u32(&adapters, desc.Flags);
                n_adapters++;
            }
            if (i == probe_index) probe_d3d12(adapter, &probe);
            IDXGIAdapter1_Release(adapter);
        }
        IDXGIFactory1_Release(factory);
        if (probe_index >= n_adapters && !probe.error[0])
            snprintf(probe.error, sizeof probe.error, "no DXGI adapter %u (%u found)", probe_index, n_adapters);
    }
    GetBuildInfoString_t build = ort_api_version >= 15 ? API(GetBuildInfoString, GetBuildInfoString_t) : NULL;
    put_str(out, ort_version);
    put_str(out, build ? build() : "");
    put_str(out, dml_path8);
    put_str(out, dml_version);
    put_str(out, probe.error);
    put_str(out, probe.shader_model);
    put_str(out, probe.feature_level);
    put_u32(out, probe.typed_uav_loads);
    put_u32(out, n_adapters);
    put(out, adapters.p, adapters.len);
    free(adapters.p);
    return 0;
}

/* ---- main loop ------------------------------------------------------------------------------- */
static LONG WINAPI on_crash(EXCEPTION_POINTERS *e) {
    void *at = e->ExceptionRecord->ExceptionAddress;
    HMODULE module = NULL;
    wchar_t wname[MAX_PATH] = L"?";
    char name[MAX_PATH * 3];
    if (GetModuleHandleExW(GET_MODULE_HANDLE_EX_FLAG_FROM_ADDRESS | GET_MODULE_HANDLE_EX_FLAG_UNCHANGED_REFCOUNT,
                           (LPCWSTR)at, &module))
        GetModuleFileNameW(module, wname, MAX_PATH);
    utf8_of(wname, name, sizeof name);
    fprintf(stderr, "ort_layouts_dml_worker: unhandled exception 0x%08lx at %p (%s+0x%llx)\n",
            (unsigned long)e->ExceptionRecord->ExceptionCode, at, name,
            (unsigned long long)((uint8_t *)at - (uint8_t *)module));
    fflush(stderr);
    TerminateProcess(GetCurrentProcess(), 3);
    return EXCEPTION_EXECUTE_HANDLER;
}

int main(void) {
    SetErrorMode(SEM_FAILCRITICALERRORS | SEM_NOGPFAULTERRORBOX | SEM_NOOPENFILEERRORBOX);
    SetUnhandledExceptionFilter(on_crash);
    _setmode(_fileno(stdin), _O_BINARY);
    _setmode(_fileno(stdout), _O_BINARY);
    /* Replies own the real stdout; anything else that prints (ONNX Runtime's log) goes to stderr. */
    proto_in = _fileno(stdin);
    proto_out = _dup(_fileno(stdout));
    if (proto_out < 0) return 2;
    _setmode(proto_out, _O_BINARY);
    fflush(stdout);
    _dup2(_fileno(stderr), _fileno(stdout));
    SetStdHandle(STD_OUTPUT_HANDLE, GetStdHandle(STD_ERROR_HANDLE));

    DWORD n = GetModuleFileNameW(NULL, exe_dir, MAX_PATH);
    while (n > 0 && exe_dir[n - 1] != L'\\' && exe_dir[n - 1] != L'/') n--;
    exe_dir[n > 0 ? n - 1 : 0] = 0;
    load_ort();

    for (;;) {
        uint8_t head[12];
        uint32_t op;
        uint64_t len;
        if (read_all(head, sizeof head)) return 0; /* the client went away */
        memcpy(&op, head, 4);
        memcpy(&len, head + 4, 8);
        if (len > ((uint64_t)1 << 36)) {
            fprintf(stderr, "ort_layouts_dml_worker: request of %llu bytes: the stream is out of step\n",
                    (unsigned long long)len);
            return 2;
        }
        uint8_t *payload = malloc(len ? (size_t)len : 1);
        if (!payload) {
            fprintf(stderr, "ort_layouts_dml_worker: out of memory for a %llu-byte request\n", (unsigned long long)len);
            return 2;
        }
        if (len && read_all(payload, (size_t)len)) { free(payload); return 0; }
        Rd r = {payload, (size_t)len, 0};
        Buf out = {0};
        int rc = 0;
        err_code = 0;
        err_text[0] = 0;
        if (op == OP_QUIT) {
            reply(0, NULL);
            free(payload);
            return 0;
        } else if (op == OP_HELLO) {
            put_u32(&out, HELLO_MAGIC);
            put_u32(&out, PROTOCOL_VERSION);
            put_str(&out, ort_version);
            put_u32(&out, ort_api_version);
        } else if (!ort_api) {
            rc = fail(CODE_WORKER, "%s", ort_load_error);
        } else if (op == OP_INFO) {
            rc = op_info(&r, &out);
        } else if (op == OP_CREATE) {
            rc = op_create(&r, &out);
        } else if (op == OP_RUN) {
            rc = op_run(&r, &out);
        } else if (op == OP_RELEASE) {
            rc = op_release(&r);
        } else {
            rc = fail(CODE_BAD_REQUEST, "unknown op %u", op);
        }
        if (!rc && out.oom) rc = fail(CODE_WORKER, "out of memory for the reply");
        int io = rc ? reply_error() : reply(0, &out);
        free(out.p);
        free(payload);
        scratch_free();
        if (io) return 0;
    }
}
