//! No input makes the parser panic or hang: garbage, mutations of real models, deep
//! nesting, huge values. A cheap deterministic stand-in for the fuzz target, run on every
//! `cargo test`.

use super::*;

/// xorshift64*: deterministic, no dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// A model touching most of the parser.
fn sample() -> String {
    doc(
        &format!(
            r#"{START}{}
            <bpmn:exclusiveGateway id="x" default="d"/>
            <bpmn:sequenceFlow id="c" sourceRef="x" targetRef="task"><bpmn:conditionExpression>=a</bpmn:conditionExpression></bpmn:sequenceFlow>
            {}
            <bpmn:serviceTask id="task">{}<bpmn:multiInstanceLoopCharacteristics>{}</bpmn:multiInstanceLoopCharacteristics></bpmn:serviceTask>
            <bpmn:boundaryEvent id="b" attachedToRef="task"><bpmn:messageEventDefinition messageRef="m"/></bpmn:boundaryEvent>
            <bpmn:subProcess id="sub"><bpmn:startEvent id="s2"/><bpmn:intermediateThrowEvent id="l"><bpmn:linkEventDefinition name="L"/></bpmn:intermediateThrowEvent><bpmn:intermediateCatchEvent id="lc"><bpmn:linkEventDefinition name="L"/></bpmn:intermediateCatchEvent></bpmn:subProcess>
            <bpmn:subProcess id="esp" triggeredByEvent="true"><bpmn:startEvent id="s3"><bpmn:errorEventDefinition errorRef="e"/></bpmn:startEvent></bpmn:subProcess>
            <bpmn:endEvent id="end"><bpmn:compensateEventDefinition activityRef="task"/></bpmn:endEvent>"#,
            flow("f", "start", "x"),
            flow("d", "x", "end"),
            ext(
                r#"<zeebe:taskDefinition type="=t" retries="2"/><zeebe:ioMapping><zeebe:input source="=a" target="b"/></zeebe:ioMapping><zeebe:taskHeaders><zeebe:header key="k" value="v"/></zeebe:taskHeaders>"#
            ),
            ext(
                r#"<zeebe:loopCharacteristics inputCollection="=items" outputCollection="o" outputElement="=x"/>"#
            ),
        ),
        r#"<bpmn:message id="m" name="n"><bpmn:extensionElements><zeebe:subscription correlationKey="=k"/></bpmn:extensionElements></bpmn:message><bpmn:error id="e" errorCode="E"/>"#,
    )
}

/// Parses and exercises the result, so a panic anywhere on the way is caught by the test.
fn exercise(input: &[u8]) {
    match parse(input) {
        Ok(d) => {
            for p in &d.processes {
                let _ = p.unsupported_elements(&crate::ElementKindSet::empty());
                for e in p.elements() {
                    let _ = (e.kind(), e.job_worker(), e.event_definition());
                }
            }
        }
        Err(e) => {
            let _ = e.to_string();
        }
    }
}

#[test]
fn random_bytes_never_panic() {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    for _ in 0..2_000 {
        let len = rng.below(300);
        let bytes: Vec<u8> = (0..len).map(|_| rng.next() as u8).collect();
        exercise(&bytes);
    }
}

#[test]
fn mutated_models_never_panic() {
    let base = sample().into_bytes();
    exercise(&base);
    let tokens: &[&[u8]] = &[
        b"<",
        b">",
        b"/>",
        b"\"",
        b"=",
        b"&",
        b"&amp;",
        b"&#0;",
        b"&#x110000;",
        b"<bpmn:task id=\"x\">",
        b"</bpmn:subProcess>",
        b"<![CDATA[",
        b"]]>",
        b"<!--",
        b"-->",
        b"xmlns:bpmn=\"\"",
        b"id=\"task\"",
        b"<bpmn:boundaryEvent attachedToRef=\"b\"/>",
        b"\xff",
        b"\xe2\x82",
        b"<?x?>",
        b"<bpmn:sequenceFlow id=\"z\" sourceRef=\"z\" targetRef=\"z\"/>",
    ];
    let mut rng = Rng(42);
    for _ in 0..3_000 {
        let mut bytes = base.clone();
        for _ in 0..=rng.below(4) {
            let at = rng.below(bytes.len() + 1);
            match rng.below(4) {
                0 => {
                    let end = (at + rng.below(40)).min(bytes.len());
                    bytes.drain(at..end);
                }
                1 => {
                    let token = tokens[rng.below(tokens.len())];
                    bytes.splice(at..at, token.iter().copied());
                }
                2 => {
                    if at < bytes.len() {
                        bytes[at] = rng.next() as u8;
                    }
                }
                _ => bytes.truncate(at),
            }
        }
        exercise(&bytes);
    }
}

#[test]
fn deep_nesting_is_bounded() {
    // Sub-processes nested far deeper than the XML depth limit: an error, not a stack
    // overflow.
    let depth = 10_000;
    let mut xml = format!(r#"<bpmn:definitions {NS}><bpmn:process id="p" isExecutable="true">"#);
    for i in 0..depth {
        xml.push_str(&format!(r#"<bpmn:subProcess id="s{i}">"#));
    }
    for _ in 0..depth {
        xml.push_str("</bpmn:subProcess>");
    }
    xml.push_str("</bpmn:process></bpmn:definitions>");
    assert!(matches!(
        parse(xml.as_bytes()),
        Err(crate::ParseError::Xml(_))
    ));

    // Within the limit, nested sub-processes parse (and are validated) fine.
    let depth = crate::xml::MAX_DEPTH - 5;
    let mut body = String::new();
    for i in 0..depth {
        body.push_str(&format!(
            r#"<bpmn:subProcess id="s{i}"><bpmn:startEvent id="st{i}"/>"#
        ));
    }
    for _ in 0..depth {
        body.push_str("</bpmn:subProcess>");
    }
    let p = valid(&format!("{START}{body}"), "");
    assert_eq!(p.elements().len(), 2 + 2 * depth);
}

#[test]
fn huge_values_are_fine() {
    let name = "x".repeat(5_000_000);
    let p = valid(
        &format!(
            r#"{START}<bpmn:serviceTask id="t" name="{name}">{}</bpmn:serviceTask>"#,
            ext(&format!(r#"<zeebe:taskDefinition type="={name}"/>"#))
        ),
        "",
    );
    assert_eq!(p.expressions()[0].text.len(), name.len());
}

#[test]
fn many_elements_are_fine() {
    let mut body = String::from(START);
    let mut previous = "start".to_string();
    for i in 0..5_000 {
        body.push_str(&format!(r#"<bpmn:task id="t{i}"/>"#));
        body.push_str(&flow(&format!("f{i}"), &previous, &format!("t{i}")));
        previous = format!("t{i}");
    }
    let p = valid(&body, "");
    assert_eq!(p.sequence_flows().len(), 5_000);
}
