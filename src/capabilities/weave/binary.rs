//! `GIT binary patch` data: git's base85 lines ([`crate::kit::base85`]) around a zlib stream.
//!
//! Each line starts with a length character (`A`–`Z` for 1–26 bytes, `a`–`z` for 27–52) followed by groups
//! of five base85 characters, each group four big-endian bytes. The decoded bytes are a zlib stream that
//! inflates to the size given on the `literal N` line.

/// Decode the base85 lines of one block and inflate them to `size` bytes.
pub fn decode_literal(lines: &[&[u8]], size: usize) -> Result<Vec<u8>, String> {
    let zipped = crate::kit::base85::decode_lines(lines)?;
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
mod tests {
    use super::*;

    #[test]
    fn round_trip() {
        let data: Vec<u8> = (0..300u32).map(|i| (i * 7 % 256) as u8).collect();
        let mut zipped = Vec::new();
        {
            use std::io::Write;
            let mut w = gix::zlib::stream::deflate::Write::new(
                &mut zipped,
                gix::zlib::Compression::DEFAULT,
            );
            w.write_all(&data).unwrap();
            w.flush().unwrap();
        }
        let mut text = Vec::new();
        crate::kit::base85::encode_lines(&mut text, &zipped);
        let refs: Vec<&[u8]> = text.split(|&b| b == b'\n').collect();
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
