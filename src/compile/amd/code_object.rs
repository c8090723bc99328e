//! Reads kernel resource usage out of an AMDGPU code object, without a GPU or ROCm.
//!
//! Flow: bytes (a clang offload bundle from `hipcc --genco`, or a bare ELF from hiprtc) ->
//! the amdgcn ELF -> its `NT_AMDGPU_METADATA` note (code object v3+: a MessagePack map with
//! `amdhsa.kernels`) -> per kernel: VGPR, AGPR, SGPR counts, spill counts, scratch, LDS and
//! the wavefront size. Every clang that writes code object v3 or later writes these keys the
//! same way, so this is the one reader for hipcc, amdclang++, upstream clang and hiprtc.
//! Everything is bounds-checked: a malformed object gives `None`, never a panic.

use std::collections::BTreeMap;

/// Resource usage of one kernel, as the code object's metadata records it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct KernelUsage {
    pub name: String,
    pub vgprs: u32,
    pub agprs: u32,
    pub sgprs: u32,
    pub vgpr_spills: u32,
    pub sgpr_spills: u32,
    /// Private (scratch) bytes per lane: spills and stack arrays.
    pub scratch_bytes: u32,
    /// Static LDS bytes.
    pub lds_bytes: u32,
    /// Lanes per wave the kernel was compiled for (0 when the metadata does not say).
    pub wavefront_size: u32,
}

const BUNDLE_MAGIC: &[u8] = b"__CLANG_OFFLOAD_BUNDLE__";

/// The amdgcn device ELF inside `bytes` (the bundle entry whose id names `amdgcn`), or
/// `bytes` itself when it is already an ELF.
pub fn device_elf(bytes: &[u8]) -> Option<&[u8]> {
    if bytes.starts_with(b"\x7fELF") {
        return Some(bytes);
    }
    if !bytes.starts_with(BUNDLE_MAGIC) {
        return None;
    }
    let mut r = Reader::new(bytes, BUNDLE_MAGIC.len());
    let entries = r.u64()?;
    for _ in 0..entries.min(64) {
        let (offset, size, id_len) = (r.u64()?, r.u64()?, r.u64()?);
        let id = r.take(usize::try_from(id_len).ok()?)?;
        if id.windows(6).any(|w| w == b"amdgcn") && size > 0 {
            let start = usize::try_from(offset).ok()?;
            let end = start.checked_add(usize::try_from(size).ok()?)?;
            return bytes.get(start..end);
        }
    }
    None
}

/// Resource usage of every kernel in a code object.
pub fn kernel_usage(bytes: &[u8]) -> Option<Vec<KernelUsage>> {
    let elf = device_elf(bytes)?;
    let note = metadata_note(elf)?;
    let doc = MsgPack::new(note).value()?;
    let kernels = doc.get("amdhsa.kernels")?.as_array()?;
    Some(
        kernels
            .iter()
            .filter_map(|k| {
                let num = |key: &str| k.get(key).and_then(|v| v.as_u64()).unwrap_or(0) as u32;
                Some(KernelUsage {
                    name: k.get(".name")?.as_str()?.to_string(),
                    vgprs: num(".vgpr_count"),
                    agprs: num(".agpr_count"),
                    sgprs: num(".sgpr_count"),
                    vgpr_spills: num(".vgpr_spill_count"),
                    sgpr_spills: num(".sgpr_spill_count"),
                    scratch_bytes: num(".private_segment_fixed_size"),
                    lds_bytes: num(".group_segment_fixed_size"),
                    wavefront_size: num(".wavefront_size"),
                })
            })
            .collect(),
    )
}

/// Little-endian cursor with bounds checks.
struct Reader<'a> {
    b: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    fn new(b: &'a [u8], pos: usize) -> Self {
        Reader { b, pos }
    }
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let s = self.b.get(self.pos..self.pos.checked_add(n)?)?;
        self.pos += n;
        Some(s)
    }
    fn u16(&mut self) -> Option<u16> {
        Some(u16::from_le_bytes(self.take(2)?.try_into().ok()?))
    }
    fn u32(&mut self) -> Option<u32> {
        Some(u32::from_le_bytes(self.take(4)?.try_into().ok()?))
    }
    fn u64(&mut self) -> Option<u64> {
        Some(u64::from_le_bytes(self.take(8)?.try_into().ok()?))
    }
}

/// The descriptor of the `AMDGPU` note of type 32 (`NT_AMDGPU_METADATA`), searched in every
/// `SHT_NOTE` section of an ELF64 little-endian object.
fn metadata_note(elf: &[u8]) -> Option<&[u8]> {
    if elf.get(4) != Some(&2) || elf.get(5) != Some(&1) {
        return None; // not ELF64 little-endian
    }
    let mut h = Reader::new(elf, 0x28);
    let shoff = usize::try_from(h.u64()?).ok()?;
    let mut h = Reader::new(elf, 0x3a);
    let (shentsize, shnum) = (h.u16()? as usize, h.u16()? as usize);
    for i in 0..shnum {
        let mut s = Reader::new(elf, shoff.checked_add(i.checked_mul(shentsize)?)?);
        let _name = s.u32()?;
        if s.u32()? != 7 {
            continue; // SHT_NOTE
        }
        let mut s = Reader::new(elf, s.pos + 16); // skip sh_flags, sh_addr
        let (off, size) = (
            usize::try_from(s.u64()?).ok()?,
            usize::try_from(s.u64()?).ok()?,
        );
        let mut n = Reader::new(elf.get(off..off.checked_add(size)?)?, 0);
        while n.pos + 12 <= n.b.len() {
            let (namesz, descsz, ty) = (n.u32()? as usize, n.u32()? as usize, n.u32()?);
            let name = n.take(namesz.div_ceil(4) * 4)?;
            let desc = n.take(descsz.div_ceil(4) * 4)?;
            if ty == 32 && name.starts_with(b"AMDGPU") {
                return desc.get(..descsz);
            }
        }
    }
    None
}

/// The subset of MessagePack values the metadata uses.
#[derive(Debug, Clone, PartialEq)]
enum Value {
    Nil,
    Bool(bool),
    Int(i64),
    UInt(u64),
    Float(f64),
    Str(String),
    Bin(Vec<u8>),
    Array(Vec<Value>),
    Map(BTreeMap<String, Value>),
}

impl Value {
    fn get(&self, key: &str) -> Option<&Value> {
        match self {
            Value::Map(m) => m.get(key),
            _ => None,
        }
    }
    fn as_array(&self) -> Option<&[Value]> {
        match self {
            Value::Array(a) => Some(a),
            _ => None,
        }
    }
    fn as_str(&self) -> Option<&str> {
        match self {
            Value::Str(s) => Some(s),
            _ => None,
        }
    }
    fn as_u64(&self) -> Option<u64> {
        match self {
            Value::UInt(u) => Some(*u),
            Value::Int(i) => u64::try_from(*i).ok(),
            _ => None,
        }
    }
}

/// A MessagePack decoder (big-endian lengths and numbers, per the spec), depth-limited.
struct MsgPack<'a> {
    b: &'a [u8],
    pos: usize,
    depth: u32,
}

impl<'a> MsgPack<'a> {
    fn new(b: &'a [u8]) -> Self {
        MsgPack {
            b,
            pos: 0,
            depth: 0,
        }
    }
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let s = self.b.get(self.pos..self.pos.checked_add(n)?)?;
        self.pos += n;
        Some(s)
    }
    fn be(&mut self, n: usize) -> Option<u64> {
        Some(
            self.take(n)?
                .iter()
                .fold(0u64, |acc, &x| (acc << 8) | x as u64),
        )
    }
    fn str(&mut self, n: usize) -> Option<Value> {
        Some(Value::Str(
            String::from_utf8_lossy(self.take(n)?).into_owned(),
        ))
    }
    fn array(&mut self, n: usize) -> Option<Value> {
        let mut v = Vec::with_capacity(n.min(1024));
        for _ in 0..n {
            v.push(self.value()?);
        }
        Some(Value::Array(v))
    }
    fn map(&mut self, n: usize) -> Option<Value> {
        let mut m = BTreeMap::new();
        for _ in 0..n {
            let k = match self.value()? {
                Value::Str(s) => s,
                other => format!("{other:?}"),
            };
            m.insert(k, self.value()?);
        }
        Some(Value::Map(m))
    }
    fn value(&mut self) -> Option<Value> {
        self.depth += 1;
        if self.depth > 32 {
            return None;
        }
        let tag = *self.take(1)?.first()?;
        let v = match tag {
            0x00..=0x7f => Value::UInt(tag as u64),
            0x80..=0x8f => self.map((tag & 0x0f) as usize)?,
            0x90..=0x9f => self.array((tag & 0x0f) as usize)?,
            0xa0..=0xbf => self.str((tag & 0x1f) as usize)?,
            0xc0 => Value::Nil,
            0xc2 => Value::Bool(false),
            0xc3 => Value::Bool(true),
            0xc4..=0xc6 => {
                let n = self.be(1 << (tag - 0xc4))? as usize;
                Value::Bin(self.take(n)?.to_vec())
            }
            0xca => Value::Float(f32::from_bits(self.be(4)? as u32) as f64),
            0xcb => Value::Float(f64::from_bits(self.be(8)?)),
            0xcc..=0xcf => Value::UInt(self.be(1 << (tag - 0xcc))?),
            0xd0..=0xd3 => {
                let n = 1usize << (tag - 0xd0);
                let raw = self.be(n)?;
                let shift = 64 - 8 * n as u32;
                Value::Int(((raw << shift) as i64) >> shift)
            }
            0xd9..=0xdb => {
                let n = self.be(1 << (tag - 0xd9))? as usize;
                self.str(n)?
            }
            0xdc | 0xdd => {
                let n = self.be(if tag == 0xdc { 2 } else { 4 })? as usize;
                self.array(n)?
            }
            0xde | 0xdf => {
                let n = self.be(if tag == 0xde { 2 } else { 4 })? as usize;
                self.map(n)?
            }
            0xe0..=0xff => Value::Int((tag as i8) as i64),
            _ => return None, // ext types: not used by the metadata
        };
        self.depth -= 1;
        Some(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mp_str(s: &str) -> Vec<u8> {
        let mut v = vec![0xa0 | s.len() as u8];
        v.extend_from_slice(s.as_bytes());
        v
    }

    /// A one-section ELF64 whose note holds `desc`.
    fn elf_with_note(desc: &[u8]) -> Vec<u8> {
        let mut note = Vec::new();
        note.extend_from_slice(&7u32.to_le_bytes()); // "AMDGPU\0"
        note.extend_from_slice(&(desc.len() as u32).to_le_bytes());
        note.extend_from_slice(&32u32.to_le_bytes());
        note.extend_from_slice(b"AMDGPU\0\0");
        note.extend_from_slice(desc);
        while note.len() % 4 != 0 {
            note.push(0);
        }
        let note_off = 64usize;
        let shoff = note_off + note.len();
        let mut elf = vec![0u8; 64];
        elf[..4].copy_from_slice(b"\x7fELF");
        elf[4] = 2;
        elf[5] = 1;
        elf[0x28..0x30].copy_from_slice(&(shoff as u64).to_le_bytes());
        elf[0x3a..0x3c].copy_from_slice(&64u16.to_le_bytes());
        elf[0x3c..0x3e].copy_from_slice(&1u16.to_le_bytes());
        elf.extend_from_slice(&note);
        let mut sh = vec![0u8; 64];
        sh[4..8].copy_from_slice(&7u32.to_le_bytes());
        sh[0x18..0x20].copy_from_slice(&(note_off as u64).to_le_bytes());
        sh[0x20..0x28].copy_from_slice(&(note.len() as u64).to_le_bytes());
        elf.extend_from_slice(&sh);
        elf
    }

    fn metadata() -> Vec<u8> {
        let mut k = vec![0x87];
        k.extend(mp_str(".name"));
        k.extend(mp_str("gemm"));
        k.extend(mp_str(".vgpr_count"));
        k.extend([0xcc, 200]);
        k.extend(mp_str(".agpr_count"));
        k.push(64);
        k.extend(mp_str(".sgpr_count"));
        k.push(40);
        k.extend(mp_str(".private_segment_fixed_size"));
        k.extend([0xcd, 0x01, 0x00]);
        k.extend(mp_str(".group_segment_fixed_size"));
        k.extend([0xce, 0, 1, 0, 0]);
        k.extend(mp_str(".wavefront_size"));
        k.push(64);
        let mut doc = vec![0x82];
        doc.extend(mp_str("amdhsa.version"));
        doc.extend([0x92, 1, 2]);
        doc.extend(mp_str("amdhsa.kernels"));
        doc.push(0x91);
        doc.extend(k);
        doc
    }

    #[test]
    fn reads_usage_from_an_elf_and_from_a_bundle() {
        let elf = elf_with_note(&metadata());
        let want = vec![KernelUsage {
            name: "gemm".into(),
            vgprs: 200,
            agprs: 64,
            sgprs: 40,
            vgpr_spills: 0,
            sgpr_spills: 0,
            scratch_bytes: 256,
            lds_bytes: 65536,
            wavefront_size: 64,
        }];
        assert_eq!(kernel_usage(&elf), Some(want.clone()));

        let mut bundle = BUNDLE_MAGIC.to_vec();
        bundle.extend(2u64.to_le_bytes());
        let host_id = b"host-x86_64-unknown-linux";
        let dev_id = b"hipv4-amdgcn-amd-amdhsa--gfx90a";
        let header = bundle.len() + 2 * 24 + host_id.len() + dev_id.len();
        for (off, size, id) in [
            (header, 0usize, &host_id[..]),
            (header, elf.len(), &dev_id[..]),
        ] {
            bundle.extend((off as u64).to_le_bytes());
            bundle.extend((size as u64).to_le_bytes());
            bundle.extend((id.len() as u64).to_le_bytes());
            bundle.extend_from_slice(id);
        }
        bundle.extend_from_slice(&elf);
        assert_eq!(kernel_usage(&bundle), Some(want));
    }

    #[test]
    fn malformed_objects_give_none() {
        assert_eq!(kernel_usage(b""), None);
        assert_eq!(kernel_usage(b"\x7fELF\x02\x01"), None);
        let elf = elf_with_note(&metadata());
        for cut in [10, 70, elf.len() - 70] {
            assert_eq!(kernel_usage(&elf[..cut]), None, "cut at {cut}");
        }
        assert_eq!(kernel_usage(&elf_with_note(&[0x91, 0xc1])), None);
    }
}
