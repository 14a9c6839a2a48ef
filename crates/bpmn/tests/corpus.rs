//! Every BPMN model of the shared corpora either parses or is rejected for the reason we
//! expect. The expectations come from the upstream test that uses the model (column
//! `referenced_by_at_that_commit` of `zeebe-models/MANIFEST.tsv`) or, for models no test
//! deploys, from reading the model. The corpora are read in place, never copied.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code: a failed unwrap is a failed test"
)]

use beeline_bpmn::{ParseError, parse};
use std::path::{Path, PathBuf};

#[derive(Debug, Clone, Copy)]
enum Expect {
    /// Parses and validates.
    Valid,
    /// Rejected; one validation message contains this text.
    Invalid(&'static str),
    /// Not well-formed XML; the message contains this text.
    Malformed(&'static str),
}

use Expect::*;

const NO_EXECUTABLE: Expect = Invalid("Must contain at least one executable process");

/// `(path under the corpora folder, expectation, why)`. Fragments (`*.part.bpmn`, and the one
/// fragment without that suffix) are wrapped into a process first, see `wrap`.
const EXPECTATIONS: &[(&str, Expect, &str)] = &[
    // ---- BPMN MIWG reference models: interchange models, mostly not executable --------
    (
        "bpmn-miwg/Reference/A.1.0.bpmn",
        NO_EXECUTABLE,
        "isExecutable=false",
    ),
    (
        "bpmn-miwg/Reference/A.2.0.bpmn",
        NO_EXECUTABLE,
        "isExecutable=false",
    ),
    (
        "bpmn-miwg/Reference/A.2.1.bpmn",
        NO_EXECUTABLE,
        "isExecutable=false",
    ),
    (
        "bpmn-miwg/Reference/A.3.0.bpmn",
        NO_EXECUTABLE,
        "isExecutable=false",
    ),
    (
        "bpmn-miwg/Reference/A.4.0.bpmn",
        NO_EXECUTABLE,
        "isExecutable=false",
    ),
    (
        "bpmn-miwg/Reference/A.4.1.bpmn",
        NO_EXECUTABLE,
        "isExecutable=false",
    ),
    (
        "bpmn-miwg/Reference/B.1.0.bpmn",
        NO_EXECUTABLE,
        "isExecutable=false",
    ),
    (
        "bpmn-miwg/Reference/B.2.0.bpmn",
        NO_EXECUTABLE,
        "isExecutable=false",
    ),
    (
        "bpmn-miwg/Reference/C.1.0.bpmn",
        Invalid("Must have exactly one 'zeebe:taskDefinition' extension element"),
        "a Camunda 7 model: service task without job type, JUEL conditions",
    ),
    (
        "bpmn-miwg/Reference/C.1.1.bpmn",
        Invalid("Expected expression but found static value 'bpmn:getDataObject('approved')'"),
        "XPath conditions, service task without job type",
    ),
    (
        "bpmn-miwg/Reference/C.2.0.bpmn",
        NO_EXECUTABLE,
        "isExecutable=false",
    ),
    (
        "bpmn-miwg/Reference/C.3.0.bpmn",
        Invalid("Must have exactly one zeebe:subscription extension element"),
        "descriptive model: messages without correlation, gateways without conditions",
    ),
    (
        "bpmn-miwg/Reference/C.4.0.bpmn",
        NO_EXECUTABLE,
        "isExecutable=false",
    ),
    (
        "bpmn-miwg/Reference/C.5.0.bpmn",
        NO_EXECUTABLE,
        "isExecutable=false",
    ),
    (
        "bpmn-miwg/Reference/C.6.0.bpmn",
        NO_EXECUTABLE,
        "isExecutable=false",
    ),
    (
        "bpmn-miwg/Reference/C.7.0.bpmn",
        NO_EXECUTABLE,
        "isExecutable=false",
    ),
    (
        "bpmn-miwg/Reference/C.8.0.bpmn",
        NO_EXECUTABLE,
        "isExecutable=false",
    ),
    (
        "bpmn-miwg/Reference/C.8.1.bpmn",
        Invalid("Expected path expression 'Current Vacation Status'"),
        "output targets with spaces and conditions without '=': Zeebe rejects them too",
    ),
    ("bpmn-miwg/Reference/C.9.0.bpmn", Valid, "Web Modeler model"),
    ("bpmn-miwg/Reference/C.9.1.bpmn", Valid, "Web Modeler model"),
    ("bpmn-miwg/Reference/C.9.2.bpmn", Valid, "Web Modeler model"),
    // ---- camunda-8-js-sdk: models its integration tests deploy ---------------------------
    (
        "zeebe-models/camunda-8-js-sdk/src/__tests__/testdata/BpmnParser.bpmn",
        Valid,
        "BpmnParser.unit.spec.ts",
    ),
    (
        "zeebe-models/camunda-8-js-sdk/src/__tests__/testdata/BpmnParser2.bpmn",
        Valid,
        "BpmnParser.unit.spec.ts",
    ),
    (
        "zeebe-models/camunda-8-js-sdk/src/__tests__/testdata/Client-BrokenBpmn.bpmn",
        Invalid("Attribute 'type' must be present and not empty"),
        "Client-BrokenBpmn.spec.ts expects 3 INVALID_ARGUMENT",
    ),
    (
        "zeebe-models/camunda-8-js-sdk/src/__tests__/testdata/Client-DeployWorkflow.bpmn",
        Valid,
        "deployed",
    ),
    (
        "zeebe-models/camunda-8-js-sdk/src/__tests__/testdata/Client-MessageStart.bpmn",
        Valid,
        "deployed",
    ),
    (
        "zeebe-models/camunda-8-js-sdk/src/__tests__/testdata/Client-SkipFirstTask.bpmn",
        Valid,
        "deployed",
    ),
    (
        "zeebe-models/camunda-8-js-sdk/src/__tests__/testdata/Client-ThrowError.bpmn",
        Valid,
        "deployed",
    ),
    (
        "zeebe-models/camunda-8-js-sdk/src/__tests__/testdata/Client-Update-Job-Timeout.bpmn",
        Valid,
        "deployed",
    ),
    (
        "zeebe-models/camunda-8-js-sdk/src/__tests__/testdata/MigrateProcess-Version-1.bpmn",
        Valid,
        "deployed",
    ),
    (
        "zeebe-models/camunda-8-js-sdk/src/__tests__/testdata/MigrateProcess-Version-2.bpmn",
        Valid,
        "deployed",
    ),
    (
        "zeebe-models/camunda-8-js-sdk/src/__tests__/testdata/Signal.bpmn",
        Valid,
        "deployed",
    ),
    (
        "zeebe-models/camunda-8-js-sdk/src/__tests__/testdata/StreamJobs.bpmn",
        Valid,
        "deployed",
    ),
    (
        "zeebe-models/camunda-8-js-sdk/src/__tests__/testdata/Worker-Failure-Backoff.bpmn",
        Valid,
        "deployed",
    ),
    (
        "zeebe-models/camunda-8-js-sdk/src/__tests__/testdata/Worker-LongPoll.bpmn",
        Valid,
        "deployed",
    ),
    (
        "zeebe-models/camunda-8-js-sdk/src/__tests__/testdata/Worker-RaiseIncident.bpmn",
        Valid,
        "deployed",
    ),
    (
        "zeebe-models/camunda-8-js-sdk/src/__tests__/testdata/await-outcome.bpmn",
        Valid,
        "deployed",
    ),
    (
        "zeebe-models/camunda-8-js-sdk/src/__tests__/testdata/completeUserTask-rest-test-process.bpmn",
        Valid,
        "deployed",
    ),
    (
        "zeebe-models/camunda-8-js-sdk/src/__tests__/testdata/conditional-pathway.bpmn",
        Valid,
        "deployed",
    ),
    (
        "zeebe-models/camunda-8-js-sdk/src/__tests__/testdata/hello-world-complete.bpmn",
        Valid,
        "deployed",
    ),
    (
        "zeebe-models/camunda-8-js-sdk/src/__tests__/testdata/message-correlation-test.bpmn",
        Valid,
        "deployed",
    ),
    (
        "zeebe-models/camunda-8-js-sdk/src/__tests__/testdata/modeller7File.bpmn",
        Malformed("is not closed"),
        "truncated upstream (corpora README)",
    ),
    (
        "zeebe-models/camunda-8-js-sdk/src/__tests__/testdata/modify-process-instance-rest.bpmn",
        Valid,
        "deployed",
    ),
    (
        "zeebe-models/camunda-8-js-sdk/src/__tests__/testdata/multi-tenant-worker-test.bpmn",
        Valid,
        "deployed",
    ),
    (
        "zeebe-models/camunda-8-js-sdk/src/__tests__/testdata/zeebe-user-task.bpmn",
        Valid,
        "deployed",
    ),
    (
        "zeebe-models/camunda-8-js-sdk/zeebe-extra/design/grpc-state-machine.bpmn",
        Invalid("Must reference a signal"),
        "a design sketch no test deploys: events without messages or signals",
    ),
    // ---- camunda/zeebe: Java client deploy fixtures -------------------------------------
    (
        "zeebe-models/camunda-zeebe/clients/java/src/test/resources/processes/another-demo-process.bpmn",
        Invalid("Expected path expression '$.foo'"),
        "JSONPath mappings of Zeebe 0.x; the client test mocks the gateway, no broker checks it",
    ),
    (
        "zeebe-models/camunda-zeebe/clients/java/src/test/resources/processes/demo-process.bpmn",
        Invalid("Expected path expression '$.foo'"),
        "JSONPath mappings of Zeebe 0.x; the client test mocks the gateway, no broker checks it",
    ),
    (
        "zeebe-models/camunda-zeebe/clients/java/src/test/resources/processes/simple-process.bpmn",
        Valid,
        "deployable",
    ),
    // ---- camunda/zeebe: bpmn-model parser and validation fixtures -----------------------
    (
        "zeebe-models/camunda-zeebe/zeebe/bpmn-model/src/test/resources/io/camunda/zeebe/model/bpmn/CollaborationParserTest.bpmn",
        NO_EXECUTABLE,
        "parser fixture, not executable",
    ),
    (
        "zeebe-models/camunda-zeebe/zeebe/bpmn-model/src/test/resources/io/camunda/zeebe/model/bpmn/DataObjectTest.bpmn",
        NO_EXECUTABLE,
        "parser fixture, not executable",
    ),
    (
        "zeebe-models/camunda-zeebe/zeebe/bpmn-model/src/test/resources/io/camunda/zeebe/model/bpmn/DataStoreTest.bpmn",
        NO_EXECUTABLE,
        "parser fixture, not executable",
    ),
    (
        "zeebe-models/camunda-zeebe/zeebe/bpmn-model/src/test/resources/io/camunda/zeebe/model/bpmn/DefinitionsTest.shouldImportEmptyDefinitions.bpmn",
        NO_EXECUTABLE,
        "no process",
    ),
    (
        "zeebe-models/camunda-zeebe/zeebe/bpmn-model/src/test/resources/io/camunda/zeebe/model/bpmn/DefinitionsTest.shouldNotAffectComments.bpmn",
        NO_EXECUTABLE,
        "parser fixture, not executable",
    ),
    (
        "zeebe-models/camunda-zeebe/zeebe/bpmn-model/src/test/resources/io/camunda/zeebe/model/bpmn/DefinitionsTest.shouldNotAffectCommentsResult.bpmn",
        Malformed("only one root element"),
        "expected-output fragment without a root element (corpora README)",
    ),
    (
        "zeebe-models/camunda-zeebe/zeebe/bpmn-model/src/test/resources/io/camunda/zeebe/model/bpmn/DefinitionsTest.shouldNotImportWrongOrderedSequence.bpmn",
        NO_EXECUTABLE,
        "parser fixture, not executable",
    ),
    (
        "zeebe-models/camunda-zeebe/zeebe/bpmn-model/src/test/resources/io/camunda/zeebe/model/bpmn/GenerateIdTest.bpmn",
        NO_EXECUTABLE,
        "parser fixture, not executable",
    ),
    (
        "zeebe-models/camunda-zeebe/zeebe/bpmn-model/src/test/resources/io/camunda/zeebe/model/bpmn/ProcessTest.shouldImportProcess.bpmn",
        NO_EXECUTABLE,
        "parser fixture, not executable",
    ),
    (
        "zeebe-models/camunda-zeebe/zeebe/bpmn-model/src/test/resources/io/camunda/zeebe/model/bpmn/ReferenceTest.shouldFindReferenceWithNamespace.bpmn",
        NO_EXECUTABLE,
        "parser fixture, not executable",
    ),
    (
        "zeebe-models/camunda-zeebe/zeebe/bpmn-model/src/test/resources/io/camunda/zeebe/model/bpmn/ResourceRolesTest.bpmn",
        NO_EXECUTABLE,
        "parser fixture, not executable",
    ),
    (
        "zeebe-models/camunda-zeebe/zeebe/bpmn-model/src/test/resources/io/camunda/zeebe/model/bpmn/instance/TextAnnotationTest.bpmn",
        NO_EXECUTABLE,
        "parser fixture, not executable",
    ),
    (
        "zeebe-models/camunda-zeebe/zeebe/bpmn-model/src/test/resources/io/camunda/zeebe/model/bpmn/instance/zeebe/ZeebeExecutionListenersTest.bpmn",
        Valid,
        "ZeebeExecutionListenersTest",
    ),
    (
        "zeebe-models/camunda-zeebe/zeebe/bpmn-model/src/test/resources/io/camunda/zeebe/model/bpmn/instance/zeebe/ZeebePropertiesTest.bpmn",
        Valid,
        "ZeebePropertiesTest",
    ),
    (
        "zeebe-models/camunda-zeebe/zeebe/bpmn-model/src/test/resources/io/camunda/zeebe/model/bpmn/traversal/CollaborationModelWalkerTest.bpmn",
        Valid,
        "ModelWalkerTest",
    ),
    (
        "zeebe-models/camunda-zeebe/zeebe/bpmn-model/src/test/resources/io/camunda/zeebe/model/bpmn/traversal/ModelWalkerTest.bpmn",
        Valid,
        "ModelWalkerTest",
    ),
    (
        "zeebe-models/camunda-zeebe/zeebe/bpmn-model/src/test/resources/io/camunda/zeebe/model/bpmn/validation/AdHocSubProcess.bpmn",
        Invalid("Must have at least one activity."),
        "UnsupportedElementTest rejected it (ad-hoc was unsupported then); today: empty ad-hoc",
    ),
    (
        "zeebe-models/camunda-zeebe/zeebe/bpmn-model/src/test/resources/io/camunda/zeebe/model/bpmn/validation/LinkEventTest.testCatchLinkEventAfterEventBasedGatewayNotAllowed.bpmn",
        Invalid("Event-based gateway must have at least 2 outgoing sequence flows."),
        "ZeebeLinkEventValidationTest",
    ),
    (
        "zeebe-models/camunda-zeebe/zeebe/bpmn-model/src/test/resources/io/camunda/zeebe/model/bpmn/validation/LinkEventTest.testEventLinkMultipleSources.bpmn",
        Valid,
        "ZeebeLinkEventValidationTest",
    ),
    (
        "zeebe-models/camunda-zeebe/zeebe/bpmn-model/src/test/resources/io/camunda/zeebe/model/bpmn/validation/LinkEventTest.testInvalidEventLinkMultipleTarget.bpmn",
        Invalid(
            "Multiple intermediate catch link event definitions with the same name 'LinkA' are not allowed.",
        ),
        "ZeebeLinkEventValidationTest",
    ),
    (
        "zeebe-models/camunda-zeebe/zeebe/bpmn-model/src/test/resources/io/camunda/zeebe/model/bpmn/validation/LinkEventTest.testValidEventLink.bpmn",
        Valid,
        "ZeebeLinkEventValidationTest",
    ),
    (
        "zeebe-models/camunda-zeebe/zeebe/bpmn-model/src/test/resources/io/camunda/zeebe/model/bpmn/validation/ZeebeExecutionListenersValidationTest.testElementThatNotSupportExecutionListeners.bpmn",
        Invalid("Execution listeners are not supported for the 'sequenceFlow' element."),
        "ZeebeExecutionListenersValidationTest",
    ),
    (
        "zeebe-models/camunda-zeebe/zeebe/bpmn-model/src/test/resources/io/camunda/zeebe/model/bpmn/validation/ZeebeExecutionListenersValidationTest.testEventTypeNotDefined.bpmn",
        Invalid("Attribute 'eventType' must be present and not empty"),
        "ZeebeExecutionListenersValidationTest",
    ),
    (
        "zeebe-models/camunda-zeebe/zeebe/bpmn-model/src/test/resources/io/camunda/zeebe/model/bpmn/validation/collaboration-with-lanes.bpmn",
        Valid,
        "ValidateProcessTest: valid()",
    ),
    (
        "zeebe-models/camunda-zeebe/zeebe/bpmn-model/src/test/resources/io/camunda/zeebe/model/bpmn/validation/default-flow-inclusive-gateway.bpmn",
        Invalid("Default flow must start at gateway"),
        "ZeebeGatewayValidationTest",
    ),
    (
        "zeebe-models/camunda-zeebe/zeebe/bpmn-model/src/test/resources/io/camunda/zeebe/model/bpmn/validation/default-flow.bpmn",
        Invalid("Default flow must start at gateway"),
        "ZeebeGatewayValidationTest",
    ),
    (
        "zeebe-models/camunda-zeebe/zeebe/bpmn-model/src/test/resources/io/camunda/zeebe/model/bpmn/validation/multiple-timer-start-event-sub-process.bpmn",
        Invalid("Start events in subprocesses must be of type none"),
        "ZeebeStartEventValidationTest",
    ),
    (
        "zeebe-models/camunda-zeebe/zeebe/bpmn-model/src/test/resources/io/camunda/zeebe/model/bpmn/validation/no-start-event-sub-process.bpmn",
        Invalid("Must have exactly one start event"),
        "ZeebeStartEventValidationTest",
    ),
    (
        "zeebe-models/camunda-zeebe/zeebe/bpmn-model/src/test/resources/io/camunda/zeebe/model/bpmn/validation/non-executable-elements.bpmn",
        Valid,
        "ValidateProcessTest: valid()",
    ),
    // ---- orchestration-cluster-api-js: integration fixtures, all deployed ------------------
    (
        "zeebe-models/orchestration-cluster-api-js/example-app/order-process.bpmn",
        Valid,
        "deployed",
    ),
    (
        "zeebe-models/orchestration-cluster-api-js/tests-integration/fixtures/Client-ThrowError.bpmn",
        Valid,
        "deployed",
    ),
    (
        "zeebe-models/orchestration-cluster-api-js/tests-integration/fixtures/effect-worker-job-process.bpmn",
        Valid,
        "deployed",
    ),
    (
        "zeebe-models/orchestration-cluster-api-js/tests-integration/fixtures/fetch-variables-process.bpmn",
        Valid,
        "deployed",
    ),
    (
        "zeebe-models/orchestration-cluster-api-js/tests-integration/fixtures/form-test-process.bpmn",
        Valid,
        "deployed",
    ),
    (
        "zeebe-models/orchestration-cluster-api-js/tests-integration/fixtures/message-test.bpmn",
        Valid,
        "deployed",
    ),
    (
        "zeebe-models/orchestration-cluster-api-js/tests-integration/fixtures/start-form-test-process.bpmn",
        Valid,
        "deployed",
    ),
    (
        "zeebe-models/orchestration-cluster-api-js/tests-integration/fixtures/test-complete-job-process.bpmn",
        Valid,
        "deployed",
    ),
    (
        "zeebe-models/orchestration-cluster-api-js/tests-integration/fixtures/test-job-process.bpmn",
        Valid,
        "deployed",
    ),
    (
        "zeebe-models/orchestration-cluster-api-js/tests-integration/fixtures/test-process.bpmn",
        Valid,
        "deployed",
    ),
    (
        "zeebe-models/orchestration-cluster-api-js/tests-integration/fixtures/threaded-job-process.bpmn",
        Valid,
        "deployed",
    ),
    (
        "zeebe-models/orchestration-cluster-api-js/tests-integration/fixtures/user-task-process.bpmn",
        Valid,
        "deployed",
    ),
    // ---- zeebe-bpmn-moddle: XML syntax fixtures of the modeler, not deployable models -----
    (
        "zeebe-models/zeebe-bpmn-moddle/test/fixtures/xml/adhoc-sub-process-zeebe-adHoc.bpmn",
        Invalid("Must have at least one activity."),
        "a fragment without the .part suffix; wrapped: an empty ad-hoc sub-process",
    ),
    (
        "zeebe-models/zeebe-bpmn-moddle/test/fixtures/xml/rootElement.bpmn",
        NO_EXECUTABLE,
        "root elements only",
    ),
    (
        "zeebe-models/zeebe-bpmn-moddle/test/fixtures/xml/simple.bpmn",
        Invalid("Expected expression but found static value 'sourceValue'"),
        "syntax fixture with static output sources",
    ),
    (
        "zeebe-models/zeebe-bpmn-moddle/test/fixtures/xml/userTask-zeebe-formDefinition.bpmn",
        Invalid("Must have at least one start event"),
        "syntax fixture without start event",
    ),
    (
        "zeebe-models/zeebe-bpmn-moddle/test/fixtures/xml/zeebe-adHoc.bpmn",
        Invalid("Must have at least one start event"),
        "syntax fixture without start event",
    ),
    (
        "zeebe-models/zeebe-bpmn-moddle/test/fixtures/xml/zeebe-agentDefinition.bpmn",
        Invalid("Must have at least one start event"),
        "syntax fixture without start event",
    ),
    (
        "zeebe-models/zeebe-bpmn-moddle/test/fixtures/xml/zeebe-bindingType.bpmn",
        Invalid("Must have at least one start event"),
        "syntax fixture without start event",
    ),
    (
        "zeebe-models/zeebe-bpmn-moddle/test/fixtures/xml/zeebe-businessId.bpmn",
        Invalid("Must have at least one start event"),
        "syntax fixture without start event",
    ),
    (
        "zeebe-models/zeebe-bpmn-moddle/test/fixtures/xml/zeebe-conditionalFilter.bpmn",
        Invalid("Must have a condition"),
        "conditional start event without its condition",
    ),
    (
        "zeebe-models/zeebe-bpmn-moddle/test/fixtures/xml/zeebe-execution-listeners.bpmn",
        Valid,
        "syntax fixture",
    ),
    (
        "zeebe-models/zeebe-bpmn-moddle/test/fixtures/xml/zeebe-linkedResources.bpmn",
        Invalid("Must have at least one start event"),
        "syntax fixture without start event",
    ),
    (
        "zeebe-models/zeebe-bpmn-moddle/test/fixtures/xml/zeebe-properties.bpmn",
        Valid,
        "syntax fixture",
    ),
    (
        "zeebe-models/zeebe-bpmn-moddle/test/fixtures/xml/zeebe-taskListeners.bpmn",
        Invalid("Task listener event type 'assign' is not supported."),
        "syntax fixture with an event type Zeebe does not know",
    ),
    (
        "zeebe-models/zeebe-bpmn-moddle/test/fixtures/xml/zeebe-versionTag.bpmn",
        Valid,
        "syntax fixture",
    ),
    // Fragments, wrapped in an executable process (see `wrap`).
    (
        "zeebe-models/zeebe-bpmn-moddle/test/fixtures/xml/adhoc-sub-process-zeebe-agentDefinition.part.bpmn",
        Invalid("Must have at least one activity."),
        "empty ad-hoc sub-process",
    ),
    (
        "zeebe-models/zeebe-bpmn-moddle/test/fixtures/xml/businessRuleTask-zeebe-calledDecision.part.bpmn",
        Valid,
        "",
    ),
    (
        "zeebe-models/zeebe-bpmn-moddle/test/fixtures/xml/call-activity-zeebe-calledElement-propagateAllChildVariables.part.bpmn",
        Valid,
        "",
    ),
    (
        "zeebe-models/zeebe-bpmn-moddle/test/fixtures/xml/call-activity-zeebe-calledElement-propagateAllParentVariables.part.bpmn",
        Valid,
        "",
    ),
    (
        "zeebe-models/zeebe-bpmn-moddle/test/fixtures/xml/call-activity-zeebe-calledElement.part.bpmn",
        Valid,
        "",
    ),
    (
        "zeebe-models/zeebe-bpmn-moddle/test/fixtures/xml/calledDecision-bindingType.part.bpmn",
        Invalid("Attribute 'decisionId' must be present and not empty"),
        "only the binding type is set",
    ),
    (
        "zeebe-models/zeebe-bpmn-moddle/test/fixtures/xml/calledDecision-versionTag.part.bpmn",
        Invalid("Attribute 'decisionId' must be present and not empty"),
        "only the binding is set",
    ),
    (
        "zeebe-models/zeebe-bpmn-moddle/test/fixtures/xml/calledElement-bindingType.part.bpmn",
        Invalid("Attribute 'processId' must be present and not empty"),
        "only the binding type is set",
    ),
    (
        "zeebe-models/zeebe-bpmn-moddle/test/fixtures/xml/calledElement-businessId.part.bpmn",
        Invalid("Attribute 'processId' must be present and not empty"),
        "only the business id is set",
    ),
    (
        "zeebe-models/zeebe-bpmn-moddle/test/fixtures/xml/calledElement-versionTag.part.bpmn",
        Invalid("Attribute 'processId' must be present and not empty"),
        "only the binding is set",
    ),
    (
        "zeebe-models/zeebe-bpmn-moddle/test/fixtures/xml/event-zeebe-executionListener.part.bpmn",
        Valid,
        "",
    ),
    (
        "zeebe-models/zeebe-bpmn-moddle/test/fixtures/xml/formDefinition-bindingType.part.bpmn",
        Invalid("Exactly one of the attributes 'formId, formKey' must be present and not blank"),
        "only the binding type is set",
    ),
    (
        "zeebe-models/zeebe-bpmn-moddle/test/fixtures/xml/formDefinition-versionTag.part.bpmn",
        Invalid("Exactly one of the attributes 'formId, formKey' must be present and not blank"),
        "only the binding is set",
    ),
    (
        "zeebe-models/zeebe-bpmn-moddle/test/fixtures/xml/gateway-zeebe-executionListener.part.bpmn",
        Valid,
        "",
    ),
    (
        "zeebe-models/zeebe-bpmn-moddle/test/fixtures/xml/input-zeebe-modelerConfiguration.part.bpmn",
        Invalid("Expected path expression but not found."),
        "an input without target",
    ),
    (
        "zeebe-models/zeebe-bpmn-moddle/test/fixtures/xml/message-zeebe-subscription.part.bpmn",
        Valid,
        "",
    ),
    (
        "zeebe-models/zeebe-bpmn-moddle/test/fixtures/xml/process-zeebe-jobPriority.part.bpmn",
        NO_EXECUTABLE,
        "a process fragment without isExecutable",
    ),
    (
        "zeebe-models/zeebe-bpmn-moddle/test/fixtures/xml/process-zeebe-userTaskForm.part.bpmn",
        NO_EXECUTABLE,
        "a process fragment without isExecutable",
    ),
    (
        "zeebe-models/zeebe-bpmn-moddle/test/fixtures/xml/property-zeebe-modelerConfiguration.part.bpmn",
        Valid,
        "",
    ),
    (
        "zeebe-models/zeebe-bpmn-moddle/test/fixtures/xml/scriptTask-zeebe-script.part.bpmn",
        Valid,
        "",
    ),
    (
        "zeebe-models/zeebe-bpmn-moddle/test/fixtures/xml/serviceTask-zeebe-agentDefinition.part.bpmn",
        Invalid("Must have exactly one 'zeebe:taskDefinition' extension element"),
        "no job type",
    ),
    (
        "zeebe-models/zeebe-bpmn-moddle/test/fixtures/xml/serviceTask-zeebe-jobPriority.part.bpmn",
        Invalid("Must have exactly one 'zeebe:taskDefinition' extension element"),
        "no job type",
    ),
    (
        "zeebe-models/zeebe-bpmn-moddle/test/fixtures/xml/startEvent-zeebe-conditionalFilter.part.bpmn",
        Invalid("Must have a condition"),
        "no condition",
    ),
    (
        "zeebe-models/zeebe-bpmn-moddle/test/fixtures/xml/startEvent-zeebe-formDefinition-formId.part.bpmn",
        Valid,
        "",
    ),
    (
        "zeebe-models/zeebe-bpmn-moddle/test/fixtures/xml/startEvent-zeebe-formDefinition-formKey.part.bpmn",
        Valid,
        "",
    ),
    (
        "zeebe-models/zeebe-bpmn-moddle/test/fixtures/xml/startEvent-zeebe-properties.part.bpmn",
        Valid,
        "",
    ),
    (
        "zeebe-models/zeebe-bpmn-moddle/test/fixtures/xml/task-modelerTemplate.part.bpmn",
        Invalid("Element 'bpmn:Task' is not a BPMN element"),
        "moddle accepts the type name as tag",
    ),
    (
        "zeebe-models/zeebe-bpmn-moddle/test/fixtures/xml/task-modelerTemplateIcon.part.bpmn",
        Invalid("Element 'bpmn:Task' is not a BPMN element"),
        "moddle accepts the type name as tag",
    ),
    (
        "zeebe-models/zeebe-bpmn-moddle/test/fixtures/xml/task-modelerTemplateVersion.part.bpmn",
        Invalid("Element 'bpmn:Task' is not a BPMN element"),
        "moddle accepts the type name as tag",
    ),
    (
        "zeebe-models/zeebe-bpmn-moddle/test/fixtures/xml/task-zeebe-executionListener.part.bpmn",
        Valid,
        "",
    ),
    (
        "zeebe-models/zeebe-bpmn-moddle/test/fixtures/xml/userTask-zeebe-assignmentDefinition.part.bpmn",
        Valid,
        "",
    ),
    (
        "zeebe-models/zeebe-bpmn-moddle/test/fixtures/xml/userTask-zeebe-formDefinition-externalReference.part.bpmn",
        Invalid("Exactly one of the attributes 'formId, formKey' must be present and not blank"),
        "externalReference needs zeebe:userTask",
    ),
    (
        "zeebe-models/zeebe-bpmn-moddle/test/fixtures/xml/userTask-zeebe-formDefinition-formId.part.bpmn",
        Valid,
        "",
    ),
    (
        "zeebe-models/zeebe-bpmn-moddle/test/fixtures/xml/userTask-zeebe-formDefinition-formKey.part.bpmn",
        Valid,
        "",
    ),
    (
        "zeebe-models/zeebe-bpmn-moddle/test/fixtures/xml/userTask-zeebe-priority.part.bpmn",
        Valid,
        "",
    ),
    (
        "zeebe-models/zeebe-bpmn-moddle/test/fixtures/xml/userTask-zeebe-taskListener.part.bpmn",
        Invalid("Task listeners are only allowed on Camunda user tasks."),
        "no zeebe:userTask",
    ),
    (
        "zeebe-models/zeebe-bpmn-moddle/test/fixtures/xml/userTask-zeebe-taskSchedule.part.bpmn",
        Valid,
        "",
    ),
    (
        "zeebe-models/zeebe-bpmn-moddle/test/fixtures/xml/userTask-zeebe-userTask.part.bpmn",
        Valid,
        "",
    ),
    (
        "zeebe-models/zeebe-bpmn-moddle/test/fixtures/xml/zeebe-versionTag.part.bpmn",
        NO_EXECUTABLE,
        "a process fragment without isExecutable",
    ),
    (
        "zeebe-models/zeebe-bpmn-moddle/test/fixtures/xml/zeebe-service-task/adhoc-sub-process-zeebe-extensions.part.bpmn",
        Invalid("Must have at least one activity."),
        "empty ad-hoc sub-process",
    ),
    (
        "zeebe-models/zeebe-bpmn-moddle/test/fixtures/xml/zeebe-service-task/adhoc-sub-process-zeebe-ioMapping.part.bpmn",
        Invalid("Must have at least one activity."),
        "empty ad-hoc sub-process",
    ),
    (
        "zeebe-models/zeebe-bpmn-moddle/test/fixtures/xml/zeebe-service-task/adhoc-sub-process-zeebe-loopCharacteristics.part.bpmn",
        Invalid("Must have at least one activity."),
        "empty ad-hoc sub-process",
    ),
    (
        "zeebe-models/zeebe-bpmn-moddle/test/fixtures/xml/zeebe-service-task/adhoc-sub-process-zeebe-retryCounter.part.bpmn",
        Invalid("Must have at least one activity."),
        "empty ad-hoc sub-process",
    ),
    (
        "zeebe-models/zeebe-bpmn-moddle/test/fixtures/xml/zeebe-service-task/businessRuleTask-zeebe-extensions.part.bpmn",
        Valid,
        "",
    ),
    (
        "zeebe-models/zeebe-bpmn-moddle/test/fixtures/xml/zeebe-service-task/businessRuleTask-zeebe-ioMapping.part.bpmn",
        Invalid(
            "Must have either one 'zeebe:calledDecision' or one 'zeebe:taskDefinition' extension element",
        ),
        "no implementation",
    ),
    (
        "zeebe-models/zeebe-bpmn-moddle/test/fixtures/xml/zeebe-service-task/businessRuleTask-zeebe-loopCharacteristics.part.bpmn",
        Invalid(
            "Must have either one 'zeebe:calledDecision' or one 'zeebe:taskDefinition' extension element",
        ),
        "no implementation",
    ),
    (
        "zeebe-models/zeebe-bpmn-moddle/test/fixtures/xml/zeebe-service-task/businessRuleTask-zeebe-retryCounter.part.bpmn",
        Invalid("Element id must be present and not empty."),
        "no id",
    ),
    (
        "zeebe-models/zeebe-bpmn-moddle/test/fixtures/xml/zeebe-service-task/scriptTask-zeebe-extensions.part.bpmn",
        Valid,
        "",
    ),
    (
        "zeebe-models/zeebe-bpmn-moddle/test/fixtures/xml/zeebe-service-task/scriptTask-zeebe-ioMapping.part.bpmn",
        Invalid(
            "Must have either one 'zeebe:script' or one 'zeebe:taskDefinition' extension element",
        ),
        "no implementation",
    ),
    (
        "zeebe-models/zeebe-bpmn-moddle/test/fixtures/xml/zeebe-service-task/scriptTask-zeebe-loopCharacteristics.part.bpmn",
        Invalid(
            "Must have either one 'zeebe:script' or one 'zeebe:taskDefinition' extension element",
        ),
        "no implementation",
    ),
    (
        "zeebe-models/zeebe-bpmn-moddle/test/fixtures/xml/zeebe-service-task/scriptTask-zeebe-retryCounter.part.bpmn",
        Invalid("Element id must be present and not empty."),
        "no id",
    ),
    (
        "zeebe-models/zeebe-bpmn-moddle/test/fixtures/xml/zeebe-service-task/sendTask-zeebe-extensions.part.bpmn",
        Valid,
        "",
    ),
    (
        "zeebe-models/zeebe-bpmn-moddle/test/fixtures/xml/zeebe-service-task/sendTask-zeebe-ioMapping.part.bpmn",
        Invalid(
            "Must have either one 'zeebe:publishMessage' or one 'zeebe:taskDefinition' extension element",
        ),
        "no implementation",
    ),
    (
        "zeebe-models/zeebe-bpmn-moddle/test/fixtures/xml/zeebe-service-task/sendTask-zeebe-loopCharacteristics.part.bpmn",
        Invalid(
            "Must have either one 'zeebe:publishMessage' or one 'zeebe:taskDefinition' extension element",
        ),
        "no implementation",
    ),
    (
        "zeebe-models/zeebe-bpmn-moddle/test/fixtures/xml/zeebe-service-task/sendTask-zeebe-retryCounter.part.bpmn",
        Invalid("Element id must be present and not empty."),
        "no id",
    ),
    (
        "zeebe-models/zeebe-bpmn-moddle/test/fixtures/xml/zeebe-service-task/serviceTask-zeebe-extensions.part.bpmn",
        Valid,
        "",
    ),
    (
        "zeebe-models/zeebe-bpmn-moddle/test/fixtures/xml/zeebe-service-task/serviceTask-zeebe-ioMapping.part.bpmn",
        Invalid("Must have exactly one 'zeebe:taskDefinition' extension element"),
        "no job type",
    ),
    (
        "zeebe-models/zeebe-bpmn-moddle/test/fixtures/xml/zeebe-service-task/serviceTask-zeebe-linkedResource.part.bpmn",
        Invalid("Must have exactly one 'zeebe:taskDefinition' extension element"),
        "linked resources without a job type",
    ),
    (
        "zeebe-models/zeebe-bpmn-moddle/test/fixtures/xml/zeebe-service-task/serviceTask-zeebe-loopCharacteristics.part.bpmn",
        Invalid("Must have exactly one 'zeebe:taskDefinition' extension element"),
        "no job type",
    ),
    (
        "zeebe-models/zeebe-bpmn-moddle/test/fixtures/xml/zeebe-service-task/serviceTask-zeebe-retryCounter.part.bpmn",
        Invalid("Element id must be present and not empty."),
        "no id",
    ),
];

/// Fragments that do not carry the `.part` suffix.
const UNSUFFIXED_FRAGMENTS: &[&str] =
    &["zeebe-models/zeebe-bpmn-moddle/test/fixtures/xml/adhoc-sub-process-zeebe-adHoc.bpmn"];

fn corpora() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpora")
}

/// All `.bpmn` files under `dir`, as paths relative to the corpora folder.
fn bpmn_files(root: &Path, dir: &Path, into: &mut Vec<String>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<_> = entries.flatten().map(|e| e.path()).collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            bpmn_files(root, &path, into);
        } else if path.extension().is_some_and(|e| e == "bpmn") {
            // .dmn and .form files belong to other crates.
            if let Ok(relative) = path.strip_prefix(root) {
                into.push(relative.to_string_lossy().replace('\\', "/"));
            }
        }
    }
}

/// Puts a fragment (one element) into a document with an executable process, the way
/// its root element needs: flow nodes in the process (with a start event unless it is one),
/// root elements beside it, a `zeebe:input` or `zeebe:property` in a service task.
fn wrap(fragment: &str) -> String {
    let body = fragment
        .trim_start()
        .strip_prefix("<?xml")
        .and_then(|rest| rest.split_once("?>"))
        .map_or(fragment, |(_, rest)| rest);
    let tag: String = body
        .trim_start()
        .trim_start_matches('<')
        .chars()
        .take_while(|c| !c.is_whitespace() && *c != '>' && *c != '/')
        .collect();
    let local = tag.rsplit(':').next().unwrap_or_default();
    let ns = r#"xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL" xmlns:zeebe="http://camunda.org/schema/zeebe/1.0""#;
    let start = r#"<bpmn:startEvent id="wrapper_start"/>"#;
    let task = |ext: &str| {
        format!(
            r#"<bpmn:serviceTask id="wrapper_task"><bpmn:extensionElements><zeebe:taskDefinition type="t"/>{ext}</bpmn:extensionElements></bpmn:serviceTask>"#
        )
    };
    let (in_process, beside) = match local {
        "process" => (String::new(), body.to_string()),
        "message" | "error" | "signal" | "escalation" => (start.to_string(), body.to_string()),
        "input" => (
            format!(
                "{start}{}",
                task(&format!("<zeebe:ioMapping>{body}</zeebe:ioMapping>"))
            ),
            String::new(),
        ),
        "property" => (
            format!(
                "{start}{}",
                task(&format!("<zeebe:properties>{body}</zeebe:properties>"))
            ),
            String::new(),
        ),
        "startEvent" => (body.to_string(), String::new()),
        _ => (format!("{start}{body}"), String::new()),
    };
    let process = if in_process.is_empty() {
        String::new()
    } else {
        format!(r#"<bpmn:process id="wrapper" isExecutable="true">{in_process}</bpmn:process>"#)
    };
    format!(
        r#"<bpmn:definitions {ns} id="wrapper_definitions">{process}{beside}</bpmn:definitions>"#
    )
}

/// What happened, for the table check and the summary.
fn outcome(bytes: &[u8]) -> (Result<usize, String>, Vec<String>) {
    match parse(bytes) {
        Ok(d) => (Ok(d.processes.len()), Vec::new()),
        Err(ParseError::Xml(e)) => (Err(format!("malformed: {e}")), vec![e.to_string()]),
        Err(ParseError::Invalid(errors)) => {
            let messages: Vec<String> = errors.iter().map(|e| e.message.clone()).collect();
            (Err(format!("invalid: {}", messages.join(" | "))), messages)
        }
    }
}

#[test]
fn every_corpus_model_parses_or_is_rejected_as_expected() {
    let root = corpora();
    if !root.join("zeebe-models").is_dir() || !root.join("bpmn-miwg").is_dir() {
        println!(
            "SKIPPED: the corpora are not at {}; the corpus test did not run",
            root.display()
        );
        return;
    }
    let mut files = Vec::new();
    bpmn_files(&root, &root.join("zeebe-models"), &mut files);
    bpmn_files(&root, &root.join("bpmn-miwg/Reference"), &mut files);

    let mut problems = Vec::new();
    let (mut parsed, mut rejected, mut malformed) = (0, 0, 0);
    for file in &files {
        let Some((_, expect, why)) = EXPECTATIONS.iter().find(|(f, _, _)| f == file) else {
            problems.push(format!("{file}: no expectation in the table"));
            continue;
        };
        let Ok(bytes) = std::fs::read(root.join(file)) else {
            problems.push(format!("{file}: cannot be read"));
            continue;
        };
        let is_fragment =
            file.ends_with(".part.bpmn") || UNSUFFIXED_FRAGMENTS.contains(&file.as_str());
        let bytes = if is_fragment {
            wrap(&String::from_utf8_lossy(&bytes)).into_bytes()
        } else {
            bytes
        };
        let (result, messages) = outcome(&bytes);
        let ok = match (expect, &result) {
            (Valid, Ok(_)) => {
                parsed += 1;
                true
            }
            (Invalid(text), Err(e)) if e.starts_with("invalid") => {
                rejected += 1;
                messages.iter().any(|m| m.contains(text))
            }
            (Malformed(text), Err(e)) if e.starts_with("malformed") => {
                malformed += 1;
                e.contains(text)
            }
            _ => false,
        };
        if !ok {
            problems.push(format!(
                "{file}\n    expected {expect:?} ({why})\n    got {}",
                result.map_or_else(|e| e, |n| format!("valid, {n} process(es)"))
            ));
        }
    }
    for (file, _, _) in EXPECTATIONS {
        if !files.iter().any(|f| f == file) {
            problems.push(format!("{file}: in the table but not in the corpora"));
        }
    }
    println!(
        "corpus: {} models, {parsed} valid, {rejected} rejected by validation, {malformed} malformed",
        files.len()
    );
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn every_executable_corpus_process_has_a_consistent_arena() {
    let root = corpora();
    if !root.join("zeebe-models").is_dir() {
        println!("SKIPPED: the corpora are not at {}", root.display());
        return;
    }
    let mut files = Vec::new();
    bpmn_files(&root, &root, &mut files);
    let mut checked = 0;
    for file in files {
        let Ok(bytes) = std::fs::read(root.join(&file)) else {
            continue;
        };
        let Ok(definitions) = parse(&bytes) else {
            continue;
        };
        for process in &definitions.processes {
            checked += 1;
            for (index, element) in process.iter() {
                assert_eq!(
                    process.element_by_id(&element.id).map(|(i, _)| i),
                    Some(index),
                    "{file}"
                );
                for &flow in &element.outgoing {
                    assert_eq!(process[flow].source, index, "{file}");
                }
                for &flow in &element.incoming {
                    assert_eq!(process[flow].target, index, "{file}");
                }
                if let Some(parent) = element.parent {
                    let scope = process[parent].scope.as_ref().expect("a parent is a scope");
                    assert!(scope.children.contains(&index), "{file}: {}", element.id);
                }
            }
            for entry in process.expressions() {
                assert!(
                    process.lookup(&entry.origin.element_id).is_some()
                        || !entry.origin.element_id.is_empty(),
                    "{file}: expression of unknown element {}",
                    entry.origin.element_id
                );
            }
        }
    }
    assert!(checked > 40, "only {checked} processes checked");
}
