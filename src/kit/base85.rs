//! git's base85, as in `GIT binary patch` data (git's `base85.c`): the one encoder and the one decoder.
//!
//! Data is cut into lines of at most 52 bytes. Each line starts with a length character (`A`–`Z` for 1–26
//! bytes, `a`–`z` for 27–52) followed by groups of five base85 characters, each group four big-endian
//! bytes (the last group zero-padded).

/// git's alphabet (not RFC 1924's order of symbols).
const ALPHABET: &[u8; 85] =
    b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz!#$%&()*+-;<=>?@^_`{|}~";

/// The most bytes one line carries.
pub const LINE_BYTES: usize = 52;

/// Each byte's digit, or [`NOT_A_DIGIT`]: one lookup per character (searching the alphabet for each was a
/// tenth of weaving gitoxide's history, whose mails carry 22 MB of binary patches).
const DIGITS: [u8; 256] = {
    let mut t = [NOT_A_DIGIT; 256];
    let mut i = 0;
    while i < ALPHABET.len() {
        t[ALPHABET[i] as usize] = i as u8;
        i += 1;
    }
    t
};
const NOT_A_DIGIT: u8 = 0xff;

/// Append `data` as base85 lines, each ending in `\n`.
pub fn encode_lines(out: &mut Vec<u8>, data: &[u8]) {
    for chunk in data.chunks(LINE_BYTES) {
        let n = chunk.len() as u8;
        out.push(if n <= 26 { b'A' + n - 1 } else { b'a' + n - 27 });
        for group in chunk.chunks(4) {
            let mut b = [0u8; 4];
            b[..group.len()].copy_from_slice(group);
            let mut acc = u32::from_be_bytes(b);
            let mut five = [0u8; 5];
            for slot in five.iter_mut().rev() {
                *slot = ALPHABET[(acc % 85) as usize];
                acc /= 85;
            }
            out.extend_from_slice(&five);
        }
        out.push(b'\n');
    }
}

/// Decode base85 lines (without their line ends; empty lines are skipped) into the bytes they carry.
pub fn decode_lines(lines: &[&[u8]]) -> Result<Vec<u8>, String> {
    let mut out = Vec::with_capacity(lines.len() * LINE_BYTES);
    for line in lines {
        let Some((&len_char, data)) = line.split_first() else {
            continue;
        };
        let len = match len_char {
            b'A'..=b'Z' => (len_char - b'A' + 1) as usize,
            b'a'..=b'z' => (len_char - b'a' + 27) as usize,
            _ => return Err("bad length character in binary patch".into()),
        };
        if data.len() % 5 != 0 || data.len() / 5 * 4 < len || data.len() / 5 != len.div_ceil(4) {
            return Err("binary patch line has the wrong length".into());
        }
        let start = out.len();
        for group in data.chunks(5) {
            let mut acc: u64 = 0;
            for &c in group {
                let d = DIGITS[c as usize];
                if d == NOT_A_DIGIT {
                    return Err("bad character in binary patch".into());
                }
                acc = acc * 85 + d as u64;
            }
            if acc > u32::MAX as u64 {
                return Err("binary patch group out of range".into());
            }
            out.extend_from_slice(&(acc as u32).to_be_bytes());
        }
        out.truncate(start + len);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `git diff --binary` of a 77-byte file (`core.compression=9`): the lines git wrote.
    const GIT_LINES: &str = "zc-ke(K?=Yi3<SWQ`-*))`zWOm1JM-|5P#o7FLRnIW<=JW<~|muJr|Zng|i77ry%bT\n\
                             VM-U^qgI!?y!GfYC_8p7=IbTX$8|wf7\n";
    const GIT_CONTENT: &[u8] =
        b"hello binary\0world, with some more bytes to pass one line of fifty-two bytes\n";

    #[test]
    fn decodes_what_git_wrote_and_encodes_it_back_byte_for_byte() {
        let lines: Vec<&[u8]> = GIT_LINES.lines().map(str::as_bytes).collect();
        let zipped = decode_lines(&lines).unwrap();
        assert_eq!(zipped.len(), 52 + 22);
        let mut inflated = vec![0u8; GIT_CONTENT.len()];
        let mut z = gix::zlib::Decompress::new();
        z.decompress(&zipped, &mut inflated, gix::zlib::FlushDecompress::Finish)
            .unwrap();
        assert_eq!(inflated, GIT_CONTENT);
        let mut again = Vec::new();
        encode_lines(&mut again, &zipped);
        assert_eq!(String::from_utf8(again).unwrap(), GIT_LINES);
    }

    #[test]
    fn round_trips_every_length_and_rejects_bad_lines() {
        for n in 0..120usize {
            let data: Vec<u8> = (0..n).map(|i| (i * 37 % 256) as u8).collect();
            let mut text = Vec::new();
            encode_lines(&mut text, &data);
            let lines: Vec<&[u8]> = text.split(|&b| b == b'\n').collect();
            assert_eq!(decode_lines(&lines).unwrap(), data, "length {n}");
        }
        assert!(decode_lines(&[b"A0000"]).is_err(), "short group");
        assert!(decode_lines(&[b"1000000"]).is_err(), "bad length char");
        assert!(decode_lines(&[b"A\"0000"]).is_err(), "bad digit");
        assert!(decode_lines(&[b"A|||||"]).is_err(), "out of range");
        assert!(decode_lines(&[b"A0000000000"]).is_err(), "too many groups");
    }

    /// The lookup table accepts exactly git's alphabet, each character as its place in it.
    #[test]
    fn every_byte_is_a_digit_exactly_when_git_says_so() {
        for c in 0..=255u8 {
            let line = [b'D', b'0', b'0', b'0', b'0', c];
            match ALPHABET.iter().position(|&a| a == c) {
                Some(d) => assert_eq!(decode_lines(&[&line]).unwrap(), (d as u32).to_be_bytes()),
                None => assert!(decode_lines(&[&line]).is_err(), "{c:#x}"),
            }
        }
    }
}
