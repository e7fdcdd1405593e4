# SPDX-License-Identifier: GPL-2.0
"""
A small perf.data writer for the tests, independent of mmhitm's reader: it
follows tools/perf/Documentation/perf.data-file-format.txt and
include/uapi/linux/perf_event.h (Linux 6.12), and what it writes is
checked against `perf script` by the tests that use it.

Writes file-mode perf.data (PERFILE2, native little-endian) with one
memory-sampling event and kernel-mode PERF_RECORD_SAMPLEs carrying IP,
TID, TIME, ADDR, CPU, PERIOD, CALLCHAIN, WEIGHT and DATA_SRC, and the
header features an importer needs: HOSTNAME, OSRELEASE, VERSION, ARCH,
NRCPUS, CPUID, EVENT_DESC, CACHE, CLOCK_DATA and optionally BUILD_ID.
"""

import struct

# include/uapi/linux/perf_event.h
PERF_TYPE_RAW = 4
PERF_SAMPLE_IP = 1 << 0
PERF_SAMPLE_TID = 1 << 1
PERF_SAMPLE_TIME = 1 << 2
PERF_SAMPLE_ADDR = 1 << 3
PERF_SAMPLE_CALLCHAIN = 1 << 5
PERF_SAMPLE_CPU = 1 << 7
PERF_SAMPLE_PERIOD = 1 << 8
PERF_SAMPLE_WEIGHT = 1 << 14
PERF_SAMPLE_DATA_SRC = 1 << 15
PERF_RECORD_SAMPLE = 9
PERF_RECORD_MISC_KERNEL = 1
PERF_CONTEXT_KERNEL = (1 << 64) - 128        # (__u64)-128

# struct perf_event_attr flag bits (the bitfield after read_format)
ATTR_DISABLED = 1 << 0
ATTR_PRECISE_IP_SHIFT = 15
ATTR_SAMPLE_ID_ALL = 1 << 18
ATTR_EXCLUDE_GUEST = 1 << 20
ATTR_USE_CLOCKID = 1 << 25
ATTR_SIZE = 128                               # PERF_ATTR_SIZE_VER7

# perf_mem_data_src: field shifts and values
PERF_MEM_OP_LOAD = 0x02
PERF_MEM_OP_STORE = 0x04
PERF_MEM_OP_SHIFT = 0
PERF_MEM_LVL_HIT = 0x02
PERF_MEM_LVL_L1 = 0x08
PERF_MEM_LVL_L2 = 0x20
PERF_MEM_LVL_L3 = 0x40
PERF_MEM_LVL_REM_CCE1 = 0x400
PERF_MEM_LVL_SHIFT = 5
PERF_MEM_SNOOP_NONE = 0x02
PERF_MEM_SNOOP_HIT = 0x04
PERF_MEM_SNOOP_HITM = 0x10
PERF_MEM_SNOOP_SHIFT = 19
PERF_MEM_LOCK_LOCKED = 0x02
PERF_MEM_LOCK_SHIFT = 24
PERF_MEM_LVLNUM_L3 = 0x03
PERF_MEM_LVLNUM_SHIFT = 33


def data_src(kind, locked=False):
    """The data source of a load that hit a Modified line in another
    core's cache: 'lcl' in this socket's L3 (perf c2c LclHitm), 'rmt' in a
    remote cache (RmtHitm), or 'l1' a plain L1 hit (no HITM)."""
    op = PERF_MEM_OP_LOAD << PERF_MEM_OP_SHIFT
    lock = (PERF_MEM_LOCK_LOCKED if locked else 0x01) << PERF_MEM_LOCK_SHIFT  # 0x01: N/A
    if kind == "lcl":
        lvl = PERF_MEM_LVL_HIT | PERF_MEM_LVL_L3
        snoop = PERF_MEM_SNOOP_HITM
        extra = PERF_MEM_LVLNUM_L3 << PERF_MEM_LVLNUM_SHIFT
    elif kind == "rmt":
        # Intel's encoding of a remote-socket HITM (lvl REM_CCE1)
        lvl = PERF_MEM_LVL_HIT | PERF_MEM_LVL_REM_CCE1
        snoop = PERF_MEM_SNOOP_HITM
        extra = 0
    elif kind == "l1":
        lvl = PERF_MEM_LVL_HIT | PERF_MEM_LVL_L1
        snoop = PERF_MEM_SNOOP_NONE
        extra = 0
    else:
        raise ValueError(kind)
    return (op | (lvl << PERF_MEM_LVL_SHIFT) | (snoop << PERF_MEM_SNOOP_SHIFT) | lock | extra)


def _string(s):
    """struct perf_header_string: u32 len, then the string NUL-padded to a
    multiple of 64 bytes (perf's NAME_ALIGN)."""
    b = s.encode() + b"\0"
    b += b"\0" * (-len(b) % 64)
    return struct.pack("<I", len(b)) + b


def _attr(sample_type, config, config1, clockid, sample_period=1, precise_ip=2):
    flags = (ATTR_DISABLED | (precise_ip << ATTR_PRECISE_IP_SHIFT) | ATTR_SAMPLE_ID_ALL |
             ATTR_EXCLUDE_GUEST | ATTR_USE_CLOCKID)
    a = struct.pack("<IIQQQQQ", PERF_TYPE_RAW, ATTR_SIZE, config, sample_period, sample_type,
                    0, flags)
    a += struct.pack("<IIQQQQIiQIHHIIQ",
                     0, 0,              # wakeup_events, bp_type
                     config1, 0,        # config1 (ldlat), config2
                     0, 0,              # branch_sample_type, sample_regs_user
                     0, clockid,        # sample_stack_user, clockid
                     0,                 # sample_regs_intr
                     0, 0, 0, 0, 0,     # aux_watermark, sample_max_stack, res, aux_sample_size, aux_action
                     0)                 # sig_data
    assert len(a) == ATTR_SIZE, len(a)
    return a


SAMPLE_TYPE = (PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR |
               PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN |
               PERF_SAMPLE_WEIGHT | PERF_SAMPLE_DATA_SRC)


def _sample(s):
    """One kernel-mode PERF_RECORD_SAMPLE, fields in perf_event.h's order.
    The callchain is perf's: the kernel context marker, the IP itself,
    then the callers innermost first."""
    chain = [PERF_CONTEXT_KERNEL, s["ip"]] + list(s.get("callchain", []))
    body = struct.pack("<QIIQQIIQ", s["ip"], s["pid"], s["tid"], s["time"], s["addr"],
                       s["cpu"], 0, 1)
    body += struct.pack("<Q", len(chain)) + b"".join(struct.pack("<Q", ip) for ip in chain)
    body += struct.pack("<QQ", s.get("weight", 0), s["data_src"])
    return struct.pack("<IHH", PERF_RECORD_SAMPLE, PERF_RECORD_MISC_KERNEL, 8 + len(body)) + body


def write(path, samples, hostname, osrelease, arch="x86_64", nr_cpus=(2, 2),
          cpuid="GenuineIntel,6,143,8", perf_version="6.12.mmhitm-test",
          event_name="cpu/mem-loads,ldlat=30/P", clockid=1, clock_ref=None,
          line_size=64, kernel_build_id=None):
    """Writes samples (dicts: ip, addr, data_src, time, pid, tid, cpu,
    callchain, weight) to path. clock_ref is (wall_ns, clockid_ns) taken
    together: HEADER_CLOCK_DATA, so the times (clockid's) map to wall time."""
    attr = _attr(SAMPLE_TYPE, config=0x1cd, config1=30, clockid=clockid)  # mem-loads, ldlat
    header_size = 104
    attrs_off = header_size
    attr_entry = attr + struct.pack("<QQ", 0, 0)          # attr, then its (empty) ids section
    data_off = attrs_off + len(attr_entry)
    data = b"".join(_sample(s) for s in samples)

    feats = {}
    if kernel_build_id:
        bid = bytes.fromhex(kernel_build_id)[:20]
        name = b"[kernel.kallsyms]\0"
        name += b"\0" * (-len(name) % 8)
        ev = struct.pack("<i", -1) + bid + b"\0" * (24 - len(bid)) + name
        feats[2] = struct.pack("<IHH", 67, PERF_RECORD_MISC_KERNEL, 8 + len(ev)) + ev
    feats[3] = _string(hostname)
    feats[4] = _string(osrelease)
    feats[5] = _string(perf_version)
    feats[6] = _string(arch)
    feats[7] = struct.pack("<II", nr_cpus[0], nr_cpus[1])
    feats[9] = _string(cpuid)
    feats[12] = (struct.pack("<II", 1, ATTR_SIZE) + attr + struct.pack("<I", 0) +
                 _string(event_name))
    feats[20] = (struct.pack("<II", 1, 1) + struct.pack("<IIII", 1, line_size, 64, 8) +
                 _string("Data") + _string("32K") + _string("0"))
    if clock_ref:
        feats[29] = struct.pack("<IIQQ", 1, clockid, clock_ref[0], clock_ref[1])

    feat_table_off = data_off + len(data)
    payload_off = feat_table_off + 16 * len(feats)
    table, payload = b"", b""
    bits = 0
    for bit in sorted(feats):
        bits |= 1 << bit
        table += struct.pack("<QQ", payload_off + len(payload), len(feats[bit]))
        payload += feats[bit]

    hdr = b"PERFILE2" + struct.pack("<QQ", header_size, len(attr_entry))
    hdr += struct.pack("<QQ", attrs_off, len(attr_entry))
    hdr += struct.pack("<QQ", data_off, len(data))
    hdr += struct.pack("<QQ", 0, 0)                         # event_types
    hdr += struct.pack("<QQQQ", bits & (2**64 - 1), bits >> 64 & (2**64 - 1),
                       bits >> 128 & (2**64 - 1), bits >> 192)
    assert len(hdr) == header_size
    with open(path, "wb") as f:
        f.write(hdr + attr_entry + data + table + payload)
