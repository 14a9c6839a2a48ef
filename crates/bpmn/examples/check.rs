//! Parses BPMN files and prints the result: `cargo run --example check -- <files>`.

fn main() {
    for path in std::env::args().skip(1) {
        let bytes = match std::fs::read(&path) {
            Ok(b) => b,
            Err(e) => {
                println!("{path}: cannot read: {e}");
                continue;
            }
        };
        match beeline_bpmn::parse(&bytes) {
            Ok(d) => {
                let ids: Vec<_> = d
                    .processes
                    .iter()
                    .map(|p| p.bpmn_process_id.as_str())
                    .collect();
                let elements: usize = d.processes.iter().map(|p| p.elements().len()).sum();
                let expressions: usize = d.processes.iter().map(|p| p.expressions().len()).sum();
                println!(
                    "{path}: OK processes={ids:?} elements={elements} expressions={expressions}"
                );
            }
            Err(e) => println!("{path}: ERROR\n{e}"),
        }
    }
}
