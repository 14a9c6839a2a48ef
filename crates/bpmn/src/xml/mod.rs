//! A small namespace-aware XML tree built with quick-xml.
//!
//! The BPMN parser needs random access (references by id, counting extension elements,
//! reporting the chain of parents of an invalid element, as Zeebe does), so the document
//! is read into a flat arena of nodes first. The reader never expands DTD entities (no
//! entity-expansion attacks) and bounds the nesting depth, so no input can make it hang,
//! recurse without bound or panic.

mod position;

pub(crate) use position::LineIndex;
pub use position::Position;

use quick_xml::escape::resolve_predefined_entity;
use quick_xml::events::{BytesRef, BytesStart, Event};
use quick_xml::name::ResolveResult;
use quick_xml::{NsReader, XmlVersion};
use std::fmt;

/// The namespace of BPMN 2.0 semantic elements.
pub const BPMN_NS: &str = "http://www.omg.org/spec/BPMN/20100524/MODEL";
/// The namespace of BPMN diagram interchange.
pub const BPMNDI_NS: &str = "http://www.omg.org/spec/BPMN/20100524/DI";
/// Zeebe's extension namespace.
pub const ZEEBE_NS: &str = "http://camunda.org/schema/zeebe/1.0";

/// Deeper documents are rejected: every consumer of the tree recurses at most this deep.
/// Real models nest a few dozen levels at most.
pub const MAX_DEPTH: usize = 128;

/// The namespaces the parser distinguishes; everything else is `Other`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ns {
    /// No namespace (unprefixed attributes, or elements without a default namespace).
    None,
    Bpmn,
    BpmnDi,
    Zeebe,
    Other,
}

impl Ns {
    fn from_uri(uri: &str) -> Self {
        match uri {
            BPMN_NS => Ns::Bpmn,
            BPMNDI_NS => Ns::BpmnDi,
            ZEEBE_NS => Ns::Zeebe,
            _ => Ns::Other,
        }
    }
}

/// Index of a node in a [`Document`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) struct NodeId(u32);

#[derive(Debug, Clone)]
pub(crate) struct Attr {
    pub ns: Ns,
    pub local: String,
    pub value: String,
    /// Byte offset of the attribute name in the source.
    pub offset: usize,
}

#[derive(Debug, Clone)]
pub(crate) struct Node {
    pub ns: Ns,
    pub local: String,
    pub attrs: Vec<Attr>,
    pub children: Vec<NodeId>,
    pub parent: Option<NodeId>,
    /// The concatenated text and CDATA directly inside this element.
    pub text: String,
    /// Byte offset of the `<` of the start tag.
    pub offset: usize,
}

impl Node {
    pub(crate) fn is(&self, ns: Ns, local: &str) -> bool {
        self.ns == ns && self.local == local
    }

    pub(crate) fn is_bpmn(&self, local: &str) -> bool {
        self.is(Ns::Bpmn, local)
    }

    /// An unqualified attribute, the way BPMN and Zeebe elements carry theirs.
    pub(crate) fn attr(&self, local: &str) -> Option<&str> {
        self.attr_node(local).map(|a| a.value.as_str())
    }

    pub(crate) fn attr_node(&self, local: &str) -> Option<&Attr> {
        self.attrs
            .iter()
            .find(|a| a.ns == Ns::None && a.local == local)
    }
}

/// A parsed XML document: nodes in document order, the root first.
#[derive(Debug, Clone)]
pub(crate) struct Document {
    nodes: Vec<Node>,
    source: String,
    lines: LineIndex,
}

/// Malformed XML, with the place the reader stopped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct XmlError {
    pub message: String,
    pub position: Position,
}

impl fmt::Display for XmlError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Malformed XML at {}: {}", self.position, self.message)
    }
}

impl std::error::Error for XmlError {}

impl Document {
    pub(crate) fn root(&self) -> NodeId {
        NodeId(0)
    }

    pub(crate) fn node(&self, id: NodeId) -> &Node {
        // Node ids are only created by `parse` for this document, so they are in bounds.
        &self.nodes[id.0 as usize]
    }

    pub(crate) fn children(&self, id: NodeId) -> impl Iterator<Item = (NodeId, &Node)> + '_ {
        self.node(id)
            .children
            .iter()
            .map(move |&child| (child, self.node(child)))
    }

    /// Children in the given namespace with the given local name.
    pub(crate) fn children_named<'a>(
        &'a self,
        id: NodeId,
        ns: Ns,
        local: &'a str,
    ) -> impl Iterator<Item = NodeId> + 'a {
        self.children(id)
            .filter(move |(_, n)| n.is(ns, local))
            .map(|(child, _)| child)
    }

    /// All nodes in document order.
    pub(crate) fn all(&self) -> impl Iterator<Item = (NodeId, &Node)> + '_ {
        (0u32..).zip(self.nodes.iter()).map(|(i, n)| (NodeId(i), n))
    }

    pub(crate) fn position(&self, offset: usize) -> Position {
        self.lines.position(&self.source, offset)
    }

    pub(crate) fn node_position(&self, id: NodeId) -> Position {
        self.position(self.node(id).offset)
    }
}

/// Reads `input` into a tree. Only UTF-8 (with or without a byte order mark) is accepted.
pub(crate) fn parse(input: &[u8]) -> Result<Document, XmlError> {
    if input.starts_with(&[0xFE, 0xFF]) || input.starts_with(&[0xFF, 0xFE]) {
        return Err(XmlError {
            message: "UTF-16 encoded documents are not supported, use UTF-8".into(),
            position: Position { line: 1, column: 1 },
        });
    }
    let source = match std::str::from_utf8(input) {
        Ok(s) => s.to_owned(),
        Err(e) => {
            let valid = String::from_utf8_lossy(&input[..e.valid_up_to()]).into_owned();
            let lines = LineIndex::new(&valid);
            return Err(XmlError {
                message: "the document is not valid UTF-8".into(),
                position: lines.position(&valid, valid.len()),
            });
        }
    };
    let lines = LineIndex::new(&source);
    let (nodes, error) = build(&source);
    match error {
        Some((message, offset)) => Err(XmlError {
            message,
            position: lines.position(&source, offset),
        }),
        None => Ok(Document {
            nodes,
            source,
            lines,
        }),
    }
}

/// Builds the node arena. Returns the error message and byte offset on failure.
fn build(source: &str) -> (Vec<Node>, Option<(String, usize)>) {
    // A byte order mark is not part of the document.
    let bom = if source.starts_with('\u{FEFF}') { 3 } else { 0 };
    let text = &source[bom..];
    let mut reader = NsReader::from_str(text);
    let mut builder = TreeBuilder {
        base: text.as_ptr() as usize,
        bom,
        nodes: Vec::new(),
        stack: Vec::new(),
        root_closed: false,
    };
    loop {
        let before = usize::try_from(reader.buffer_position()).unwrap_or(usize::MAX);
        let step = match reader.read_resolved_event() {
            Err(e) => {
                let at = usize::try_from(reader.error_position()).unwrap_or(before);
                Err((e.to_string(), at))
            }
            Ok((ns, event)) => {
                let ns = match ns {
                    ResolveResult::Bound(ns) => Ok(Ns::from_uri(ns.as_ref())),
                    ResolveResult::Unbound => Ok(Ns::None),
                    ResolveResult::Unknown(prefix) => Err((
                        format!("the namespace prefix '{}' is not bound", prefix),
                        before,
                    )),
                };
                match (ns, event) {
                    (_, Event::Eof) => break,
                    (Err(e), _) => Err(e),
                    (Ok(ns), event) => builder.handle(&reader, ns, event, before),
                }
            }
        };
        if let Err((message, at)) = step {
            return (builder.nodes, Some((message, at + bom)));
        }
    }
    let end = text.len() + bom;
    if let Some(&open) = builder.stack.last() {
        let name = builder
            .nodes
            .get(open)
            .map_or(String::new(), |n| n.local.clone());
        return (
            builder.nodes,
            Some((
                format!("unexpected end of document, element '{name}' is not closed"),
                end,
            )),
        );
    }
    if builder.nodes.is_empty() {
        return (
            builder.nodes,
            Some(("the document has no root element".into(), end)),
        );
    }
    (builder.nodes, None)
}

struct TreeBuilder {
    /// Address of the text the reader borrows from, to turn borrowed slices into offsets.
    base: usize,
    bom: usize,
    nodes: Vec<Node>,
    stack: Vec<usize>,
    root_closed: bool,
}

type Step = Result<(), (String, usize)>;

impl TreeBuilder {
    fn handle(&mut self, reader: &NsReader<&[u8]>, ns: Ns, event: Event<'_>, at: usize) -> Step {
        match event {
            Event::Start(start) => self.open(reader, ns, &start, at),
            Event::Empty(start) => {
                self.open(reader, ns, &start, at)?;
                self.close();
                Ok(())
            }
            Event::End(_) => {
                self.close();
                Ok(())
            }
            Event::Text(t) => self.text(&t.xml_content(XmlVersion::Implicit1_0), at),
            Event::CData(t) => self.text(&t.xml_content(XmlVersion::Implicit1_0), at),
            Event::GeneralRef(r) => {
                let resolved = resolve_reference(&r).map_err(|m| (m, at))?;
                self.text(&resolved, at)
            }
            // Declarations, comments, processing instructions and the DTD carry nothing the
            // model needs; the DTD is deliberately never interpreted.
            Event::Decl(_) | Event::Comment(_) | Event::PI(_) | Event::DocType(_) => Ok(()),
            Event::Eof => Ok(()),
        }
    }

    fn open(
        &mut self,
        reader: &NsReader<&[u8]>,
        ns: Ns,
        start: &BytesStart<'_>,
        at: usize,
    ) -> Step {
        if self.root_closed {
            return Err(("only one root element is allowed".into(), at));
        }
        if self.stack.len() >= MAX_DEPTH {
            return Err((
                format!("elements are nested deeper than {MAX_DEPTH} levels"),
                at,
            ));
        }
        let local = start.local_name().as_ref().to_owned();
        let mut attrs = Vec::new();
        for attr in start.attributes() {
            let attr = attr.map_err(|e| (e.to_string(), at))?;
            let key = attr.key;
            // xmlns declarations are consumed by the reader's namespace resolver.
            if key.as_namespace_binding().is_some() {
                continue;
            }
            let (attr_ns, attr_local) = reader.resolver().resolve_attribute(key);
            let attr_ns = match attr_ns {
                ResolveResult::Bound(ns) => Ns::from_uri(ns.as_ref()),
                ResolveResult::Unbound => Ns::None,
                ResolveResult::Unknown(prefix) => {
                    return Err((
                        format!("the namespace prefix '{}' is not bound", prefix),
                        at,
                    ));
                }
            };
            let value = attr
                .normalized_value(XmlVersion::Implicit1_0)
                .map_err(|e| (e.to_string(), at))?
                .into_owned();
            let offset = self.offset_of(key.as_ref().as_bytes(), at);
            attrs.push(Attr {
                ns: attr_ns,
                local: attr_local.as_ref().to_owned(),
                value,
                offset,
            });
        }
        let index = self.nodes.len();
        let id = NodeId(u32::try_from(index).map_err(|_| ("too many elements".to_string(), at))?);
        let parent = self.stack.last().copied();
        if let Some(parent) = parent.and_then(|p| self.nodes.get_mut(p)) {
            parent.children.push(id);
        }
        self.nodes.push(Node {
            ns,
            local,
            attrs,
            children: Vec::new(),
            parent: parent.map(|p| NodeId(p as u32)),
            text: String::new(),
            offset: at + self.bom,
        });
        self.stack.push(index);
        Ok(())
    }

    fn close(&mut self) {
        self.stack.pop();
        if self.stack.is_empty() {
            self.root_closed = true;
        }
    }

    fn text(&mut self, text: &str, at: usize) -> Step {
        match self.stack.last().and_then(|&open| self.nodes.get_mut(open)) {
            Some(node) => {
                node.text.push_str(text);
                Ok(())
            }
            None if text.chars().all(char::is_whitespace) => Ok(()),
            None => Err(("text is not allowed outside the root element".into(), at)),
        }
    }

    /// Offset of a slice borrowed from the source; `fallback` if it is not borrowed.
    fn offset_of(&self, slice: &[u8], fallback: usize) -> usize {
        (slice.as_ptr() as usize)
            .checked_sub(self.base)
            .map_or(fallback, |o| o + self.bom)
    }
}

fn resolve_reference(reference: &BytesRef<'_>) -> Result<String, String> {
    if reference.is_char_ref() {
        return match reference.resolve_char_ref() {
            Ok(Some(c)) => Ok(c.to_string()),
            Ok(None) | Err(_) => Err(format!(
                "invalid character reference '&{};'",
                reference.xml_content(XmlVersion::Implicit1_0)
            )),
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

    fn doc(xml: &str) -> Document {
        match parse(xml.as_bytes()) {
            Ok(d) => d,
            Err(e) => panic!("{e}"),
        }
    }

    fn err(xml: &str) -> XmlError {
        match parse(xml.as_bytes()) {
            Ok(_) => panic!("expected an error"),
            Err(e) => e,
        }
    }

    #[test]
    fn resolves_namespaces_of_elements_and_attributes() {
        let d = doc(&format!(
            r#"<bpmn:definitions xmlns:bpmn="{BPMN_NS}" xmlns:zeebe="{ZEEBE_NS}">
                 <bpmn:task id="t" zeebe:modelerTemplate="x"><zeebe:taskDefinition type="a"/></bpmn:task>
               </bpmn:definitions>"#
        ));
        let root = d.node(d.root());
        assert!(root.is_bpmn("definitions"));
        let (task_id, task) = d.children(d.root()).next().unwrap();
        assert!(task.is_bpmn("task"));
        assert_eq!(task.attr("id"), Some("t"));
        assert_eq!(task.attr("modelerTemplate"), None);
        assert_eq!(task.attrs[1].ns, Ns::Zeebe);
        let (_, def) = d.children(task_id).next().unwrap();
        assert!(def.is(Ns::Zeebe, "taskDefinition"));
        assert_eq!(
            d.node_position(task_id),
            Position {
                line: 2,
                column: 18
            }
        );
    }

    #[test]
    fn default_namespace_applies_to_elements_only() {
        let d = doc(&format!(
            r#"<definitions xmlns="{BPMN_NS}" id="d"><process/></definitions>"#
        ));
        assert!(d.node(d.root()).is_bpmn("definitions"));
        assert_eq!(d.node(d.root()).attr("id"), Some("d"));
    }

    #[test]
    fn unescapes_text_attributes_and_character_references() {
        let d = doc(r#"<a x="1 &lt; 2 &#x41;"><![CDATA[<raw>]]> &amp; &#65;</a>"#);
        let a = d.node(d.root());
        assert_eq!(a.attr("x"), Some("1 < 2 A"));
        assert_eq!(a.text, "<raw> & A");
    }

    #[test]
    fn reports_malformed_xml_with_line_and_column() {
        let e = err("<a>\n  <b>\n</a>");
        assert_eq!(e.position.line, 3, "{e}");
        let e = err("<a>\n<b></b>");
        assert!(e.message.contains("not closed"), "{e}");
        let e = err("");
        assert!(e.message.contains("no root"), "{e}");
        let e = err("<a/><b/>");
        assert!(e.message.contains("one root"), "{e}");
        let e = err("<a>&custom;</a>");
        assert!(e.message.contains("unknown entity"), "{e}");
        let e = err("<x:a/>");
        assert!(e.message.contains("not bound"), "{e}");
        let e = err("<a b='1' b='2'/>");
        assert_eq!(e.position.line, 1, "{e}");
    }

    #[test]
    fn rejects_non_utf8_input_and_accepts_a_byte_order_mark() {
        let e = parse(b"<a>\n\xff</a>").unwrap_err();
        assert_eq!(e.position, Position { line: 2, column: 1 });
        assert!(parse(b"\xFF\xFE<\0a\0/\0>\0").is_err());
        let d = parse("\u{FEFF}<a>\n<b/></a>".as_bytes()).unwrap();
        let (b, _) = d.children(d.root()).next().unwrap();
        assert_eq!(d.node_position(b), Position { line: 2, column: 1 });
    }

    #[test]
    fn bounds_the_nesting_depth() {
        let deep = "<a>".repeat(MAX_DEPTH + 1) + &"</a>".repeat(MAX_DEPTH + 1);
        let e = err(&deep);
        assert!(e.message.contains("nested deeper"), "{e}");
        let ok = "<a>".repeat(MAX_DEPTH) + &"</a>".repeat(MAX_DEPTH);
        assert!(parse(ok.as_bytes()).is_ok());
    }

    #[test]
    fn never_expands_dtd_entities() {
        let e = err(r#"<!DOCTYPE a [<!ENTITY x "boom">]><a>&x;</a>"#);
        assert!(e.message.contains("unknown entity"), "{e}");
    }
}
