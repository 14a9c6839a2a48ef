//! A small XML tree for DMN files: elements by local name (DMN files use the default
//! namespace or any prefix for it), attributes, text, and the byte offset of each element
//! for error messages. The DTD is never interpreted, so no entity expansion attacks.

use quick_xml::Reader;
use quick_xml::XmlVersion;
use quick_xml::escape::resolve_predefined_entity;
use quick_xml::events::{BytesRef, BytesStart, Event};

use crate::error::{DmnError, Location};

/// Elements nested deeper than this are rejected (DMN needs a few dozen levels at most).
const MAX_DEPTH: usize = 256;

#[derive(Debug, Clone)]
pub struct Element {
    pub name: String,
    pub attrs: Vec<(String, String)>,
    pub children: Vec<Element>,
    pub text: String,
    pub offset: usize,
}

impl Element {
    pub fn attr(&self, name: &str) -> Option<&str> {
        self.attrs
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    pub fn child(&self, name: &str) -> Option<&Element> {
        self.children.iter().find(|c| c.name == name)
    }

    pub fn children_named<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a Element> + 'a {
        self.children.iter().filter(move |c| c.name == name)
    }

    /// Text of a `<text>` child (literal expressions, unary tests).
    pub fn child_text(&self, name: &str) -> Option<&str> {
        self.child(name).map(|c| c.text.as_str())
    }
}

fn local(name: &str) -> String {
    match name.rfind(':') {
        Some(i) => name[i + 1..].to_string(),
        None => name.to_string(),
    }
}

pub fn parse(source: &str) -> Result<Element, DmnError> {
    let text = source.strip_prefix('\u{FEFF}').unwrap_or(source);
    let bom = source.len() - text.len();
    let mut reader = Reader::from_str(text);
    let mut stack: Vec<Element> = Vec::new();
    let mut root: Option<Element> = None;
    let err = |msg: String, at: usize| DmnError::Xml {
        message: msg,
        location: Location::of(source, at + bom),
    };
    loop {
        let before = usize::try_from(reader.buffer_position()).unwrap_or(0);
        let event = match reader.read_event() {
            Ok(e) => e,
            Err(e) => {
                let at = usize::try_from(reader.error_position()).unwrap_or(before);
                return Err(err(e.to_string(), at));
            }
        };
        match event {
            Event::Start(start) => {
                if stack.len() >= MAX_DEPTH {
                    return Err(err(
                        format!("elements nested deeper than {MAX_DEPTH} levels"),
                        before,
                    ));
                }
                stack.push(open(&start, before + bom).map_err(|m| err(m, before))?);
            }
            Event::Empty(start) => {
                let e = open(&start, before + bom).map_err(|m| err(m, before))?;
                close(&mut stack, &mut root, e).map_err(|m| err(m, before))?;
            }
            Event::End(_) => {
                let Some(e) = stack.pop() else {
                    return Err(err("unexpected closing tag".into(), before));
                };
                close(&mut stack, &mut root, e).map_err(|m| err(m, before))?;
            }
            Event::Text(t) => {
                if let Some(top) = stack.last_mut() {
                    top.text.push_str(&t.xml_content(XmlVersion::Implicit1_0));
                }
            }
            Event::CData(t) => {
                if let Some(top) = stack.last_mut() {
                    top.text.push_str(&t.xml_content(XmlVersion::Implicit1_0));
                }
            }
            Event::GeneralRef(r) => {
                let resolved = resolve_reference(&r).map_err(|m| err(m, before))?;
                if let Some(top) = stack.last_mut() {
                    top.text.push_str(&resolved);
                }
            }
            Event::Eof => break,
            Event::Decl(_) | Event::Comment(_) | Event::PI(_) | Event::DocType(_) => {}
        }
    }
    if let Some(open) = stack.last() {
        return Err(err(
            format!("element '{}' is not closed", open.name),
            text.len(),
        ));
    }
    root.ok_or_else(|| err("the document has no root element".into(), text.len()))
}

fn open(start: &BytesStart<'_>, offset: usize) -> Result<Element, String> {
    let mut attrs = Vec::new();
    for a in start.attributes() {
        let a = a.map_err(|e| e.to_string())?;
        let value = a
            .normalized_value(XmlVersion::Implicit1_0)
            .map_err(|e| e.to_string())?
            .into_owned();
        attrs.push((local(a.key.as_ref()), value));
    }
    Ok(Element {
        name: local(start.name().as_ref()),
        attrs,
        children: Vec::new(),
        text: String::new(),
        offset,
    })
}

fn close(stack: &mut [Element], root: &mut Option<Element>, e: Element) -> Result<(), String> {
    match stack.last_mut() {
        Some(parent) => {
            parent.children.push(e);
            Ok(())
        }
        None if root.is_none() => {
            *root = Some(e);
            Ok(())
        }
        None => Err("only one root element is allowed".into()),
    }
}

fn resolve_reference(reference: &BytesRef<'_>) -> Result<String, String> {
    if reference.is_char_ref() {
        return match reference.resolve_char_ref() {
            Ok(Some(c)) => Ok(c.to_string()),
            _ => Err("invalid character reference".into()),
        };
    }
    let name = reference.xml_content(XmlVersion::Implicit1_0);
    resolve_predefined_entity(&name)
        .map(str::to_owned)
        .ok_or_else(|| format!("unknown entity '&{name};'"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_elements_text_and_entities() {
        let root = parse(
            r#"<?xml version="1.0"?><dmn:a xmlns:dmn="x" id="1"><text>x &lt; 1</text><b/></dmn:a>"#,
        )
        .unwrap();
        assert_eq!(root.name, "a");
        assert_eq!(root.attr("id"), Some("1"));
        assert_eq!(root.child_text("text"), Some("x < 1"));
        assert!(root.child("b").is_some());
    }

    #[test]
    fn reports_where_it_broke() {
        let e = parse("<a>\n<b></a>").unwrap_err();
        assert!(e.to_string().contains("line"), "{e}");
        assert!(parse("").is_err());
    }
}
