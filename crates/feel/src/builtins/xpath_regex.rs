//! XPath / XML Schema regular expressions (what FEEL's `matches`, `replace` and `split`
//! take), translated to fancy-regex syntax.
//!
//! fancy-regex supports back-references, which XPath has and the `regex` crate lacks; its
//! backtracking is capped, so a pathological pattern fails instead of hanging.

use fancy_regex::{Regex, RegexBuilder};

/// Cap on backtracking steps per match; beyond it the match fails (null), never hangs.
const BACKTRACK_LIMIT: usize = 1_000_000;
/// Cap on the compiled size of a pattern.
const SIZE_LIMIT: usize = 1 << 20;

/// Compiles `pattern` with XPath `flags` (`s`, `m`, `i`, `x`, `q`). `None` for invalid
/// flags or patterns.
pub fn compile(pattern: &str, flags: &str) -> Option<Regex> {
    if !flags
        .chars()
        .all(|c| matches!(c, 's' | 'm' | 'i' | 'x' | 'q'))
    {
        return None;
    }
    let dot_all = flags.contains('s');
    let body = if flags.contains('q') {
        fancy_regex::escape(pattern).into_owned()
    } else {
        let p = if flags.contains('x') {
            strip_whitespace(pattern)
        } else {
            pattern.to_string()
        };
        translate(&p, dot_all)?
    };
    let mut prefix = String::new();
    if flags.contains('i') {
        prefix.push('i');
    }
    if flags.contains('m') {
        prefix.push('m');
    }
    if dot_all {
        prefix.push('s');
    }
    let full = if prefix.is_empty() {
        body
    } else {
        format!("(?{prefix}){body}")
    };
    RegexBuilder::new(&full)
        .backtrack_limit(BACKTRACK_LIMIT)
        .delegate_size_limit(SIZE_LIMIT)
        .build()
        .ok()
}

/// The `x` flag removes whitespace outside character classes.
fn strip_whitespace(p: &str) -> String {
    let mut out = String::with_capacity(p.len());
    let mut in_class = 0usize;
    let mut escaped = false;
    for c in p.chars() {
        // Whitespace goes even right after a backslash: `\ s` is `\s` under `x`.
        if c.is_whitespace() && in_class == 0 {
            continue;
        }
        if escaped {
            escaped = false;
            out.push(c);
            continue;
        }
        match c {
            '\\' => {
                escaped = true;
                out.push(c);
            }
            '[' => {
                in_class += 1;
                out.push(c);
            }
            ']' if in_class > 0 => {
                in_class -= 1;
                out.push(c);
            }
            c if c.is_whitespace() && in_class == 0 => {}
            c => out.push(c),
        }
    }
    out
}

/// Rewrites the XPath constructs that differ from fancy-regex: `.` excludes `\r` as well as
/// `\n`; class subtraction `[a-z-[aeiou]]`; block escapes `\p{IsBasicLatin}`; and
/// back-references inside classes or to groups that do not exist are errors.
fn translate(p: &str, dot_all: bool) -> Option<String> {
    let chars: Vec<char> = p.chars().collect();
    let groups = count_groups(&chars);
    let mut out = String::with_capacity(p.len() + 8);
    let mut in_class = 0usize;
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        match c {
            '\\' => {
                let n = *chars.get(i + 1)?;
                if n.is_ascii_digit() {
                    if in_class > 0 || n == '0' {
                        return None;
                    }
                    let mut j = i + 1;
                    let mut num = 0usize;
                    while j < chars.len() && chars[j].is_ascii_digit() {
                        num = num * 10 + chars[j].to_digit(10)? as usize;
                        j += 1;
                    }
                    if num == 0 || num > groups {
                        return None;
                    }
                    out.push_str(&format!("\\{num}"));
                    i = j;
                    continue;
                }
                if n == 'p' || n == 'P' {
                    let close = chars[i..].iter().position(|&x| x == '}')? + i;
                    let name: String = chars[i + 3..close].iter().collect();
                    out.push_str(&block_escape(n, &name)?);
                    i = close + 1;
                    continue;
                }
                out.push(c);
                out.push(n);
                i += 2;
                continue;
            }
            '[' => {
                in_class += 1;
                out.push('[');
                if chars.get(i + 1) == Some(&'^') {
                    out.push('^');
                    i += 1;
                }
            }
            ']' if in_class > 0 => {
                in_class -= 1;
                out.push(']');
            }
            '-' if in_class > 0 && chars.get(i + 1) == Some(&'[') => {
                // XPath class subtraction `[A-Z-[OI]]` is `[A-Z--[OI]]` in Rust syntax.
                out.push_str("--");
            }
            '.' if in_class == 0 && !dot_all => out.push_str("[^\\n\\r]"),
            c => out.push(c),
        }
        i += 1;
    }
    Some(out)
}

fn count_groups(chars: &[char]) -> usize {
    let mut n = 0;
    let mut i = 0;
    let mut in_class = false;
    while i < chars.len() {
        match chars[i] {
            '\\' => i += 1,
            '[' => in_class = true,
            ']' => in_class = false,
            '(' if !in_class && chars.get(i + 1) != Some(&'?') => n += 1,
            _ => {}
        }
        i += 1;
    }
    n
}

/// `\p{IsBlock}` names Unicode blocks in XPath; Rust knows categories and scripts only, so
/// the common blocks become explicit ranges.
fn block_escape(kind: char, name: &str) -> Option<String> {
    let negated = kind == 'P';
    let range = match name {
        "IsBasicLatin" => "\\x{0}-\\x{7F}",
        "IsLatin-1Supplement" => "\\x{80}-\\x{FF}",
        "IsLatinExtended-A" => "\\x{100}-\\x{17F}",
        "IsGreek" | "IsGreekandCoptic" => "\\x{370}-\\x{3FF}",
        "IsCyrillic" => "\\x{400}-\\x{4FF}",
        n if n.starts_with("Is") => return None,
        n if n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') => {
            return Some(format!("\\{kind}{{{n}}}"));
        }
        _ => return None,
    };
    Some(if negated {
        format!("[^{range}]")
    } else {
        format!("[{range}]")
    })
}

/// Translates an XPath replacement string (`$1`, `\$`, `\\`) to fancy-regex's (`${1}`,
/// `$$`, `\`). `None` when it is invalid (a lone `$` or `\`).
pub fn replacement(r: &str) -> Option<String> {
    let mut out = String::with_capacity(r.len());
    let mut it = r.chars().peekable();
    while let Some(c) = it.next() {
        match c {
            '\\' => match it.next()? {
                '$' => out.push_str("$$"),
                '\\' => out.push('\\'),
                _ => return None,
            },
            '$' => {
                let mut digits = String::new();
                while let Some(d) = it.peek().filter(|d| d.is_ascii_digit()) {
                    digits.push(*d);
                    it.next();
                }
                if digits.is_empty() {
                    return None;
                }
                out.push_str(&format!("${{{digits}}}"));
            }
            c => out.push(c),
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(input: &str, pattern: &str, flags: &str) -> Option<bool> {
        compile(pattern, flags).and_then(|r| r.is_match(input).ok())
    }

    #[test]
    fn xpath_semantics() {
        assert_eq!(m("Mary\rJones", "Mary.Jones", ""), Some(false));
        assert_eq!(m("O", "[A-Z-[OI]]", "i"), Some(false));
        assert_eq!(m("x", "[A-Z-[OI]]", "i"), Some(true));
        assert_eq!(m("aA", "(a)\\1", "i"), Some(true));
        assert_eq!(m("h", "(.)\\3", ""), None);
        assert_eq!(
            m("hello world", "\\p{ I s B a s i c L a t i n }+", "x"),
            Some(true)
        );
        assert_eq!(m("hello world", "\\p{ IsBasicLatin}+", ""), None);
        assert_eq!(m("x[y-z]", "x[y-z]", "q"), Some(true));
        assert_eq!(m("a", "a", "p"), None);
    }

    #[test]
    fn replacements() {
        assert_eq!(replacement("a$1$1").as_deref(), Some("a${1}${1}"));
        assert_eq!(replacement("\\$").as_deref(), Some("$$"));
        assert_eq!(replacement("$"), None);
    }
}
