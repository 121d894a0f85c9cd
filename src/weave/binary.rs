//! `GIT binary patch` data: git's base85 lines around a zlib stream.
//!
//! Each line starts with a length character (`A`–`Z` for 1–26 bytes, `a`–`z` for 27–52) followed by groups
//! of five base85 characters, each group four big-endian bytes. The decoded bytes are a zlib stream that
//! inflates to the size given on the `literal N` line.

const ALPHABET: &[u8; 85] =
    b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz!#$%&()*+-;<=>?@^_`{|}~";

fn digit(c: u8) -> Option<u32> {
    ALPHABET.iter().position(|&a| a == c).map(|p| p as u32)
}

/// Decode the base85 lines of one block and inflate them to `size` bytes.
pub fn decode_literal(lines: &[&[u8]], size: usize) -> Result<Vec<u8>, String> {
    let mut zipped = Vec::new();
    for line in lines {
        let Some((&len_char, data)) = line.split_first() else {
            continue;
        };
        let len = match len_char {
            b'A'..=b'Z' => (len_char - b'A' + 1) as usize,
            b'a'..=b'z' => (len_char - b'a' + 27) as usize,
            _ => return Err("bad length character in binary patch".into()),
        };
        if data.len() % 5 != 0 || data.len() / 5 * 4 < len {
            return Err("binary patch line has the wrong length".into());
        }
        let mut bytes = Vec::with_capacity(data.len() / 5 * 4);
        for group in data.chunks(5) {
            let mut acc: u64 = 0;
            for &c in group {
                acc = acc * 85 + digit(c).ok_or("bad character in binary patch")? as u64;
            }
            if acc > u32::MAX as u64 {
                return Err("binary patch group out of range".into());
            }
            bytes.extend_from_slice(&(acc as u32).to_be_bytes());
        }
        zipped.extend_from_slice(&bytes[..len]);
    }
    let mut out = vec![0u8; size];
    let mut z = gix::zlib::Decompress::new();
    let status = z
        .decompress(&zipped, &mut out, gix::zlib::FlushDecompress::Finish)
        .map_err(|e| format!("binary patch data does not inflate: {e}"))?;
    if z.total_out() as usize != size || status != gix::zlib::Status::StreamEnd {
        return Err(format!(
            "binary patch inflates to {} bytes, not the {size} it announces",
            z.total_out()
        ));
    }
    Ok(out)
}

/// Apply a git delta (as in packs and `GIT binary patch` / `delta N`) to `src`.
pub fn apply_delta(src: &[u8], delta: &[u8]) -> Result<Vec<u8>, String> {
    let mut i = 0;
    let varint = |i: &mut usize| -> Result<usize, String> {
        let (mut v, mut shift) = (0usize, 0);
        loop {
            let b = *delta.get(*i).ok_or("truncated delta header")?;
            *i += 1;
            v |= ((b & 0x7f) as usize) << shift;
            shift += 7;
            if b & 0x80 == 0 {
                return Ok(v);
            }
        }
    };
    let src_size = varint(&mut i)?;
    let dst_size = varint(&mut i)?;
    if src_size != src.len() {
        return Err(format!(
            "the delta is for a {src_size}-byte file, this one has {} bytes",
            src.len()
        ));
    }
    let mut out = Vec::with_capacity(dst_size);
    while i < delta.len() {
        let c = delta[i];
        i += 1;
        if c & 0x80 != 0 {
            let mut take = |bits: std::ops::Range<u8>, c: u8| -> Result<usize, String> {
                let mut v = 0usize;
                for (n, bit) in bits.enumerate() {
                    if c & (1 << bit) != 0 {
                        v |= (*delta.get(i).ok_or("truncated delta")? as usize) << (8 * n);
                        i += 1;
                    }
                }
                Ok(v)
            };
            let offset = take(0..4, c)?;
            let size = match take(4..7, c)? {
                0 => 0x10000,
                s => s,
            };
            let chunk = src
                .get(offset..offset + size)
                .ok_or("delta copies outside the source")?;
            out.extend_from_slice(chunk);
        } else if c != 0 {
            let chunk = delta
                .get(i..i + c as usize)
                .ok_or("truncated delta insert")?;
            out.extend_from_slice(chunk);
            i += c as usize;
        } else {
            return Err("invalid delta opcode 0".into());
        }
    }
    if out.len() != dst_size {
        return Err("the delta does not produce the size it announces".into());
    }
    Ok(out)
}

#[cfg(test)]
pub(crate) fn encode_literal(data: &[u8]) -> Vec<String> {
    use std::io::Write;
    let mut w = gix::zlib::stream::deflate::Write::new(Vec::new(), gix::zlib::Compression::DEFAULT);
    w.write_all(data).unwrap();
    w.flush().unwrap();
    let zipped = w.into_inner();
    zipped
        .chunks(52)
        .map(|chunk| {
            let mut line = String::new();
            line.push(if chunk.len() <= 26 {
                (b'A' + chunk.len() as u8 - 1) as char
            } else {
                (b'a' + chunk.len() as u8 - 27) as char
            });
            for group in chunk.chunks(4) {
                let mut b = [0u8; 4];
                b[..group.len()].copy_from_slice(group);
                let mut acc = u32::from_be_bytes(b) as u64;
                let mut chars = [0u8; 5];
                for c in chars.iter_mut().rev() {
                    *c = ALPHABET[(acc % 85) as usize];
                    acc /= 85;
                }
                line.push_str(std::str::from_utf8(&chars).unwrap());
            }
            line
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip() {
        let data: Vec<u8> = (0..300u32).map(|i| (i * 7 % 256) as u8).collect();
        let lines = encode_literal(&data);
        let refs: Vec<&[u8]> = lines.iter().map(|l| l.as_bytes()).collect();
        assert_eq!(decode_literal(&refs, data.len()).unwrap(), data);
        assert!(decode_literal(&refs, data.len() + 1).is_err());
    }

    #[test]
    fn deltas() {
        // src "hello world" (11), dst "hello there world" (17): copy 6, insert "there ", copy 5 from 6.
        let delta = [
            11u8, 17, 0x91, 0, 6, 6, b't', b'h', b'e', b'r', b'e', b' ', 0x91, 6, 5,
        ];
        assert_eq!(
            apply_delta(b"hello world", &delta).unwrap(),
            b"hello there world"
        );
        assert!(apply_delta(b"hello", &delta).is_err());
    }
}
