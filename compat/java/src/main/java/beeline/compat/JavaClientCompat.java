package beeline.compat;

import io.camunda.zeebe.client.ZeebeClient;
import io.camunda.zeebe.client.api.ZeebeFuture;
import io.camunda.zeebe.client.api.command.ClientStatusException;
import io.camunda.zeebe.client.api.command.DeployResourceCommandStep1.DeployResourceCommandStep2;
import io.camunda.zeebe.client.api.response.ActivatedJob;
import io.camunda.zeebe.client.api.response.BrokerInfo;
import io.camunda.zeebe.client.api.response.DeploymentEvent;
import io.camunda.zeebe.client.api.response.EvaluateDecisionResponse;
import io.camunda.zeebe.client.api.response.PartitionBrokerHealth;
import io.camunda.zeebe.client.api.response.PartitionBrokerRole;
import io.camunda.zeebe.client.api.response.PartitionInfo;
import io.camunda.zeebe.client.api.response.ProcessInstanceEvent;
import io.camunda.zeebe.client.api.response.ProcessInstanceResult;
import io.camunda.zeebe.client.api.response.PublishMessageResponse;
import io.camunda.zeebe.client.api.response.Topology;
import io.camunda.zeebe.client.api.worker.JobWorker;
import io.camunda.zeebe.model.bpmn.Bpmn;
import io.camunda.zeebe.model.bpmn.BpmnModelInstance;
import io.grpc.Status;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * Zeebe's official Java client (io.camunda:zeebe-client-java 8.8) against a running Beeline
 * broker, over gRPC only. Every check prints "ok    <check>" or "FAIL  <check>: <why>"; the exit
 * status is the number of failed checks (capped), so any mismatch fails compat/java/run.sh.
 *
 * <p>Usage: java beeline.compat.JavaClientCompat <host:port> <partitions>
 *
 * <p>The checks run one after another: later ones rely on the deployment of the first ones, and
 * the incident check relies on nothing else creating keys on the job's partition meanwhile.
 */
public final class JavaClientCompat {

  /** Zeebe's keys carry their partition: key = partition << 51 | counter. */
  private static final int KEY_BITS = 51;

  private static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(20);
  private static final long JOIN_SECONDS = 30;

  private static ZeebeClient client;
  private static int partitions;
  private static int failures;
  private static int checks;

  // ---------------------------------------------------------------------------------------
  // Models. BPMN through the client's own model builder (io.camunda.zeebe.model.bpmn, shipped
  // with the client), one BPMN and the DMN as hand-written XML.
  // ---------------------------------------------------------------------------------------

  /** A service task of type java-poll between start and end. */
  private static BpmnModelInstance serviceTaskProcess(final String processId, final String type) {
    return Bpmn.createExecutableProcess(processId)
        .startEvent("start")
        .serviceTask(
            "work",
            t -> t.zeebeJobType(type).zeebeJobRetries("3").zeebeTaskHeader("owner", "java-compat"))
        .endEvent("end")
        .done();
  }

  private static BpmnModelInstance scriptProcess() {
    return Bpmn.createExecutableProcess("java-sum")
        .startEvent()
        .scriptTask("add", t -> t.zeebeExpression("a + b").zeebeResultVariable("sum"))
        .endEvent()
        .done();
  }

  /** A service task whose error NOT_AVAILABLE is caught by a boundary event. */
  private static BpmnModelInstance errorProcess() {
    return Bpmn.createExecutableProcess("java-error")
        .startEvent()
        .serviceTask("risky", t -> t.zeebeJobType("java-risky"))
        .boundaryEvent("not-available", b -> b.error("NOT_AVAILABLE"))
        .scriptTask("on-error", t -> t.zeebeExpression("\"caught\"").zeebeResultVariable("path"))
        .endEvent("error-end")
        .moveToActivity("risky")
        .scriptTask("on-success", t -> t.zeebeExpression("\"normal\"").zeebeResultVariable("path"))
        .endEvent("normal-end")
        .done();
  }

  /** A service task inside an embedded sub-process, for variable scopes. */
  private static BpmnModelInstance variablesProcess() {
    return Bpmn.createExecutableProcess("java-vars")
        .startEvent()
        .subProcess(
            "scope",
            s -> s.embeddedSubProcess().startEvent().serviceTask("inner", t -> t.zeebeJobType("java-vars")).endEvent())
        .endEvent()
        .done();
  }

  private static BpmnModelInstance signalStartProcess() {
    return Bpmn.createExecutableProcess("java-signal-start")
        .startEvent("signalled")
        .signal("java-go")
        .serviceTask("started", t -> t.zeebeJobType("java-signal-started"))
        .endEvent()
        .done();
  }

  private static BpmnModelInstance signalCatchProcess() {
    return Bpmn.createExecutableProcess("java-signal-catch")
        .startEvent()
        .intermediateCatchEvent("wait-for-go")
        .signal("java-go")
        .serviceTask("continued", t -> t.zeebeJobType("java-signal-continued"))
        .endEvent()
        .done();
  }

  /** A child process: one service task of type java-child-work. */
  private static BpmnModelInstance childProcess() {
    return Bpmn.createExecutableProcess("java-child")
        .startEvent()
        .serviceTask("child-work", t -> t.zeebeJobType("java-child-work"))
        .endEvent()
        .done();
  }

  /**
   * Calls java-child once per item, in parallel, and collects what each child shipped (with the
   * output mapping Zeebe's docs recommend for multi-instance call activities).
   */
  private static BpmnModelInstance callEachProcess() {
    return Bpmn.createExecutableProcess("java-call-each")
        .startEvent()
        .callActivity(
            "call-each",
            c ->
                c.zeebeProcessId("java-child")
                    .zeebeOutputExpression("shipped", "shipped")
                    .multiInstance(
                        m ->
                            m.parallel()
                                .zeebeInputCollectionExpression("items")
                                .zeebeInputElement("item")
                                .zeebeOutputCollection("results")
                                .zeebeOutputElementExpression("shipped")))
        .endEvent()
        .done();
  }

  /** A job-worker user task, for a task list that works through the job API. */
  private static BpmnModelInstance userTaskProcess() {
    return Bpmn.createExecutableProcess("java-user-task")
        .startEvent()
        .userTask(
            "approve",
            t ->
                t.zeebeAssignee("ann")
                    .zeebeCandidateGroups("sales, support")
                    .zeebeDueDate("2030-01-31T17:00:00Z")
                    .zeebeFormKey("camunda-forms:bpmn:approve-form"))
        .endEvent()
        .done();
  }

  private static BpmnModelInstance echoProcess() {
    return Bpmn.createExecutableProcess("java-echo").startEvent().endEvent().done();
  }

  private static BpmnModelInstance timerProcess() {
    return Bpmn.createExecutableProcess("java-timer")
        .startEvent()
        .intermediateCatchEvent("one-second")
        .timerWithDuration("PT1S")
        .endEvent()
        .done();
  }

  private static BpmnModelInstance messageStartProcess() {
    return Bpmn.createExecutableProcess("java-message-start")
        .startEvent("ordered")
        .message("java-new-order")
        .serviceTask("handle-order", t -> t.zeebeJobType("java-new-order"))
        .endEvent()
        .done();
  }

  private static BpmnModelInstance decisionProcess() {
    return Bpmn.createExecutableProcess("java-rule")
        .startEvent()
        .businessRuleTask(
            "decide", t -> t.zeebeCalledDecisionId("java-discount").zeebeResultVariable("discount"))
        .endEvent()
        .done();
  }

  /** Hand-written: a receive task, then a message catch event, both keyed by orderId. */
  private static final String MESSAGE_BPMN =
      """
      <?xml version="1.0" encoding="UTF-8"?>
      <bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL"
          xmlns:zeebe="http://camunda.org/schema/zeebe/1.0"
          id="java-messages-definitions" targetNamespace="http://beeline.dev/compat/java">
        <bpmn:message id="shipment" name="java-shipment">
          <bpmn:extensionElements>
            <zeebe:subscription correlationKey="=orderId" />
          </bpmn:extensionElements>
        </bpmn:message>
        <bpmn:message id="payment" name="java-payment">
          <bpmn:extensionElements>
            <zeebe:subscription correlationKey="=orderId" />
          </bpmn:extensionElements>
        </bpmn:message>
        <bpmn:process id="java-order" name="Order" isExecutable="true">
          <bpmn:startEvent id="placed" />
          <bpmn:sequenceFlow id="f1" sourceRef="placed" targetRef="await-shipment" />
          <bpmn:receiveTask id="await-shipment" messageRef="shipment" />
          <bpmn:sequenceFlow id="f2" sourceRef="await-shipment" targetRef="await-payment" />
          <bpmn:intermediateCatchEvent id="await-payment">
            <bpmn:messageEventDefinition id="payment-definition" messageRef="payment" />
          </bpmn:intermediateCatchEvent>
          <bpmn:sequenceFlow id="f3" sourceRef="await-payment" targetRef="done" />
          <bpmn:endEvent id="done" />
        </bpmn:process>
      </bpmn:definitions>
      """;

  /** Hand-written DMN 1.3: a discount by customer type. */
  private static final String DISCOUNT_DMN =
      """
      <?xml version="1.0" encoding="UTF-8"?>
      <definitions xmlns="https://www.omg.org/spec/DMN/20191111/MODEL/"
          id="java-pricing" name="Java compat pricing" namespace="http://beeline.dev/compat/java">
        <decision id="java-discount" name="Discount">
          <decisionTable id="discount-table" hitPolicy="FIRST">
            <input id="customer-input" label="Customer">
              <inputExpression id="customer-expression" typeRef="string">
                <text>customer</text>
              </inputExpression>
            </input>
            <output id="discount-output" name="discount" typeRef="number" />
            <rule id="gold">
              <inputEntry id="gold-in"><text>"gold"</text></inputEntry>
              <outputEntry id="gold-out"><text>0.2</text></outputEntry>
            </rule>
            <rule id="silver">
              <inputEntry id="silver-in"><text>"silver"</text></inputEntry>
              <outputEntry id="silver-out"><text>0.1</text></outputEntry>
            </rule>
            <rule id="anyone">
              <inputEntry id="anyone-in"><text>-</text></inputEntry>
              <outputEntry id="anyone-out"><text>0</text></outputEntry>
            </rule>
          </decisionTable>
        </decision>
      </definitions>
      """;

  // ---------------------------------------------------------------------------------------

  public static void main(final String[] args) throws Exception {
    if (args.length != 2) {
      System.err.println("usage: JavaClientCompat <host:port> <partitions>");
      System.exit(2);
    }
    final String address = args[0];
    partitions = Integer.parseInt(args[1]);

    // A watchdog: a hanging call must fail the suite, not stall it.
    final Thread watchdog =
        new Thread(
            () -> {
              try {
                Thread.sleep(TimeUnit.SECONDS.toMillis(170));
                System.out.println("FAIL  the Java suite did not finish within 170 s");
                System.out.flush();
                Runtime.getRuntime().halt(3);
              } catch (final InterruptedException e) {
                // finished in time
              }
            });
    watchdog.setDaemon(true);
    watchdog.start();

    client =
        ZeebeClient.newClientBuilder()
            .grpcAddress(URI.create("http://" + address))
            // Beeline has no REST API yet; nothing listens here, so an accidental REST call
            // fails loudly instead of passing.
            .restAddress(URI.create("http://127.0.0.1:1"))
            .preferRestOverGrpc(false)
            .usePlaintext()
            .defaultRequestTimeout(REQUEST_TIMEOUT)
            .build();

    try {
      runChecks();
    } finally {
      client.close();
    }

    if (failures > 0) {
      System.out.println(failures + " of " + checks + " Java client check(s) failed");
      System.exit(1);
    }
    System.out.println("all " + checks + " Java client checks passed");
    System.exit(0);
  }

  private static void runChecks() {
    check("topology: one broker, cluster size 1, replication factor 1", JavaClientCompat::topologySize);
    check("topology: every partition led and healthy", JavaClientCompat::topologyPartitions);
    check("deploy: BPMN and DMN resources in one deployment", JavaClientCompat::deploy);
    check("deploy: the same resources again keep their versions", JavaClientCompat::redeploySame);
    check("deploy: a changed process gets version 2", JavaClientCompat::redeployChanged);
    check("deploy: an invalid BPMN is INVALID_ARGUMENT", JavaClientCompat::deployInvalid);
    check("create: instance of the latest version", JavaClientCompat::createInstance);
    check("create: by process definition key", JavaClientCompat::createByKey);
    check("create: instances spread over every partition", JavaClientCompat::createSpread);
    check("create with result: returns the variables", JavaClientCompat::createWithResult);
    check("create with result: fetchVariables limits them", JavaClientCompat::createWithResultFetch);
    check("create: start before an element (start instruction)", JavaClientCompat::createStartBefore);
    check("variables: JSON values round-trip unchanged", JavaClientCompat::variablesRoundTrip);
    check(
        "variables: 300 random doubles and large longs come back exactly (create, job, complete, result)",
        JavaClientCompat::randomNumbers);
    check("variables: a 1 MiB variable round-trips", JavaClientCompat::largeVariable);
    check("deploy (deprecated DeployProcess RPC)", JavaClientCompat::deprecatedDeploy);
    check("timer: an intermediate timer catch event fires", JavaClientCompat::timer);
    check("activate jobs: a long poll is answered when a job is created", JavaClientCompat::longPoll);
    check("activate jobs: fetchVariables limits the job's variables", JavaClientCompat::fetchVariables);
    check("worker (polling, streamEnabled=false): completes jobs with variables", JavaClientCompat::pollingWorker);
    check("worker (streaming, streamEnabled=true): jobs arrive on the stream", JavaClientCompat::streamingWorker);
    check("fail: retries decrease and the job comes back after its back-off", JavaClientCompat::failWithBackoff);
    check("fail to 0 retries: incident; update retries + resolve: activatable again", JavaClientCompat::incident);
    check("throw error: caught by the error boundary event", JavaClientCompat::throwError);
    check("update job timeout: a shorter timeout makes the job come back", JavaClientCompat::updateTimeout);
    check("set variables: global and local scopes", JavaClientCompat::setVariables);
    check("cancel: instance cancelled, its job gone, cancelling again is NOT_FOUND", JavaClientCompat::cancel);
    check("publish: routed to the correlation key's partition", JavaClientCompat::publishRouting);
    check("publish: messages correlate to waiting receive task and catch event", JavaClientCompat::publishCorrelates);
    check("publish: a buffered message correlates to an instance created later", JavaClientCompat::publishBuffered);
    check("publish: a duplicate message id is ALREADY_EXISTS", JavaClientCompat::publishDuplicate);
    check("publish: a message without correlation key starts an instance", JavaClientCompat::messageStart);
    check("signal: broadcast starts one instance and continues waiting ones", JavaClientCompat::signal);
    check("decision: evaluate by id", JavaClientCompat::evaluateById);
    check("decision: evaluate by key", JavaClientCompat::evaluateByKey);
    check("decision: business rule task in a process", JavaClientCompat::businessRuleTask);
    check("decision: an unknown decision is NOT_FOUND", JavaClientCompat::evaluateUnknown);
    check("multi-instance call activity: a child per item, their results collected in order", JavaClientCompat::callEach);
    check("user task (job worker): a task list's job with Zeebe's headers, completed with the result", JavaClientCompat::userTask);
    check("error: creating an unknown process is NOT_FOUND", JavaClientCompat::unknownProcess);
    check("error: variables that are not an object are INVALID_ARGUMENT", JavaClientCompat::invalidVariables);
    check("error: completing an unknown job is NOT_FOUND", JavaClientCompat::unknownJob);
    check("error: updating retries to 0 is INVALID_ARGUMENT", JavaClientCompat::retriesZero);
    check("error: a request over 4 MiB is RESOURCE_EXHAUSTED, the node serves on", JavaClientCompat::oversized);
  }

  // ---------------------------------------------------------------------------------------
  // Checks
  // ---------------------------------------------------------------------------------------

  private static void topologySize() {
    final Topology topology = join(client.newTopologyRequest().send());
    expectEquals("brokers", 1, topology.getBrokers().size());
    expectEquals("cluster size", 1, topology.getClusterSize());
    expectEquals("partitions count", partitions, topology.getPartitionsCount());
    expectEquals("replication factor", 1, topology.getReplicationFactor());
    expect(
        topology.getGatewayVersion() != null && !topology.getGatewayVersion().isEmpty(),
        "a gateway version, got '" + topology.getGatewayVersion() + "'");
  }

  private static void topologyPartitions() {
    final Topology topology = join(client.newTopologyRequest().send());
    final BrokerInfo broker = topology.getBrokers().get(0);
    final Set<Integer> seen = new TreeSet<>();
    for (final PartitionInfo partition : broker.getPartitions()) {
      seen.add(partition.getPartitionId());
      expect(partition.isLeader(), "partition " + partition.getPartitionId() + " is not leader");
      expectEquals(
          "role of partition " + partition.getPartitionId(),
          PartitionBrokerRole.LEADER,
          partition.getRole());
      expectEquals(
          "health of partition " + partition.getPartitionId(),
          PartitionBrokerHealth.HEALTHY,
          partition.getHealth());
    }
    expectEquals("partition ids of the broker", allPartitions(), seen);
  }

  private static long sumKey;
  private static long orderProcessKey;
  private static long discountDecisionKey;

  /**
   * The resources of the first deployment, as XML. The model builder gives generated elements
   * random ids, so the models are serialized once: deploying the same text again must be
   * recognized as unchanged.
   */
  private static final Map<String, String> RESOURCES = new java.util.LinkedHashMap<>();

  private static Map<String, String> resources() {
    if (RESOURCES.isEmpty()) {
      final Map<String, BpmnModelInstance> models = new java.util.LinkedHashMap<>();
      models.put("java-poll", serviceTaskProcess("java-poll", "java-poll"));
      models.put("java-stream", serviceTaskProcess("java-stream", "java-stream"));
      models.put("java-fail", serviceTaskProcess("java-fail", "java-fail"));
      models.put("java-timeout", serviceTaskProcess("java-timeout", "java-timeout"));
      models.put("java-cancel", serviceTaskProcess("java-cancel", "java-cancel"));
      models.put("java-sum", scriptProcess());
      models.put("java-error", errorProcess());
      models.put("java-vars", variablesProcess());
      models.put("java-signal-start", signalStartProcess());
      models.put("java-signal-catch", signalCatchProcess());
      models.put("java-rule", decisionProcess());
      models.put("java-echo", echoProcess());
      models.put("java-timer", timerProcess());
      models.put("java-message-start", messageStartProcess());
      models.forEach((id, model) -> RESOURCES.put(id + ".bpmn", Bpmn.convertToString(model)));
      RESOURCES.put("java-order.bpmn", MESSAGE_BPMN);
      RESOURCES.put("java-pricing.dmn", DISCOUNT_DMN);
    }
    return RESOURCES;
  }

  private static DeploymentEvent deployAll() {
    final var command = client.newDeployResourceCommand();
    DeployResourceCommandStep2 step = null;
    for (final var resource : resources().entrySet()) {
      step =
          step == null
              ? command.addResourceStringUtf8(resource.getValue(), resource.getKey())
              : step.addResourceStringUtf8(resource.getValue(), resource.getKey());
    }
    return join(step.send());
  }

  private static final List<String> PROCESS_IDS =
      List.of(
          "java-poll", "java-stream", "java-fail", "java-timeout", "java-cancel", "java-sum",
          "java-error", "java-vars", "java-signal-start", "java-signal-catch", "java-rule",
          "java-order", "java-echo", "java-timer", "java-message-start");

  private static void deploy() {
    final DeploymentEvent deployment = deployAll();
    expect(deployment.getKey() > 0, "a deployment key, got " + deployment.getKey());
    final Map<String, Integer> versions = new HashMap<>();
    for (final var process : deployment.getProcesses()) {
      versions.put(process.getBpmnProcessId(), process.getVersion());
      expectEquals(
          "resource name of " + process.getBpmnProcessId(),
          process.getBpmnProcessId() + ".bpmn",
          process.getResourceName());
      expect(process.getProcessDefinitionKey() > 0, "a process definition key");
      expectEquals("tenant of " + process.getBpmnProcessId(), "<default>", process.getTenantId());
      if (process.getBpmnProcessId().equals("java-sum")) {
        sumKey = process.getProcessDefinitionKey();
      }
      if (process.getBpmnProcessId().equals("java-order")) {
        orderProcessKey = process.getProcessDefinitionKey();
      }
    }
    final Map<String, Integer> expected = new HashMap<>();
    PROCESS_IDS.forEach(id -> expected.put(id, 1));
    expectEquals("deployed processes and versions", expected, versions);

    expectEquals("decisions", 1, deployment.getDecisions().size());
    final var decision = deployment.getDecisions().get(0);
    expectEquals("decision id", "java-discount", decision.getDmnDecisionId());
    expectEquals("decision name", "Discount", decision.getDmnDecisionName());
    expectEquals("decision version", 1, decision.getVersion());
    expectEquals("decision's requirements id", "java-pricing", decision.getDmnDecisionRequirementsId());
    discountDecisionKey = decision.getDecisionKey();
    expectEquals("decision requirements", 1, deployment.getDecisionRequirements().size());
    final var drg = deployment.getDecisionRequirements().get(0);
    expectEquals("decision requirements id", "java-pricing", drg.getDmnDecisionRequirementsId());
    expectEquals("decision requirements resource", "java-pricing.dmn", drg.getResourceName());
    expectEquals(
        "decision requirements key of the decision",
        drg.getDecisionRequirementsKey(),
        decision.getDecisionRequirementsKey());
  }

  private static void redeploySame() {
    final DeploymentEvent again = deployAll();
    for (final var process : again.getProcesses()) {
      expectEquals("version of unchanged " + process.getBpmnProcessId(), 1, process.getVersion());
      if (process.getBpmnProcessId().equals("java-sum")) {
        expectEquals("definition key of unchanged java-sum", sumKey, process.getProcessDefinitionKey());
      }
    }
    expectEquals("version of the unchanged decision", 1, again.getDecisions().get(0).getVersion());
    expectEquals(
        "key of the unchanged decision", discountDecisionKey, again.getDecisions().get(0).getDecisionKey());
  }

  private static void redeployChanged() {
    final BpmnModelInstance changed =
        Bpmn.createExecutableProcess("java-sum")
            .startEvent()
            .scriptTask("add", t -> t.zeebeExpression("a + b").zeebeResultVariable("sum"))
            .scriptTask("mark", t -> t.zeebeExpression("2").zeebeResultVariable("version"))
            .endEvent()
            .done();
    final DeploymentEvent deployment =
        join(client.newDeployResourceCommand().addProcessModel(changed, "java-sum.bpmn").send());
    expectEquals("processes", 1, deployment.getProcesses().size());
    expectEquals("version of the changed java-sum", 2, deployment.getProcesses().get(0).getVersion());
    expect(
        deployment.getProcesses().get(0).getProcessDefinitionKey() != sumKey,
        "a new process definition key for version 2");
  }

  private static void deployInvalid() {
    final String invalid =
        "<?xml version=\"1.0\"?><bpmn:definitions"
            + " xmlns:bpmn=\"http://www.omg.org/spec/BPMN/20100524/MODEL\" id=\"d\""
            + " targetNamespace=\"x\"><bpmn:process id=\"java-broken\" isExecutable=\"true\">"
            + "<bpmn:startEvent id=\"s\"/><bpmn:sequenceFlow id=\"f\" sourceRef=\"s\""
            + " targetRef=\"nowhere\"/></bpmn:process></bpmn:definitions>";
    expectStatus(
        Status.Code.INVALID_ARGUMENT,
        null,
        () -> client.newDeployResourceCommand().addResourceStringUtf8(invalid, "broken.bpmn").send());
  }

  private static void createInstance() {
    final ProcessInstanceEvent instance =
        join(
            client
                .newCreateInstanceCommand()
                .bpmnProcessId("java-cancel")
                .latestVersion()
                .variables(Map.of("origin", "create"))
                .send());
    try {
      expect(instance.getProcessInstanceKey() > 0, "an instance key");
      expectEquals("bpmn process id", "java-cancel", instance.getBpmnProcessId());
      expectEquals("version", 1, instance.getVersion());
      expect(instance.getProcessDefinitionKey() > 0, "a process definition key");
      expectEquals("tenant", "<default>", instance.getTenantId());
    } finally {
      join(client.newCancelInstanceCommand(instance.getProcessInstanceKey()).send());
    }
  }

  private static void createByKey() {
    final ProcessInstanceEvent instance =
        join(client.newCreateInstanceCommand().processDefinitionKey(orderProcessKey).send());
    try {
      expectEquals("bpmn process id", "java-order", instance.getBpmnProcessId());
      expectEquals("process definition key", orderProcessKey, instance.getProcessDefinitionKey());
    } finally {
      join(client.newCancelInstanceCommand(instance.getProcessInstanceKey()).send());
    }
  }

  private static void createSpread() {
    final Set<Integer> seen = new TreeSet<>();
    for (int i = 0; i < 2 * partitions; i++) {
      final ProcessInstanceEvent instance =
          join(client.newCreateInstanceCommand().bpmnProcessId("java-cancel").latestVersion().send());
      seen.add(partitionOf(instance.getProcessInstanceKey()));
      join(client.newCancelInstanceCommand(instance.getProcessInstanceKey()).send());
    }
    expectEquals("partitions of " + 2 * partitions + " new instances", allPartitions(), seen);
  }

  private static void createWithResult() {
    final ProcessInstanceResult result =
        join(
            client
                .newCreateInstanceCommand()
                .bpmnProcessId("java-sum")
                .version(1)
                .variables(Map.of("a", 40, "b", 2))
                .withResult()
                .send());
    expectEquals("bpmn process id", "java-sum", result.getBpmnProcessId());
    expectEquals("version", 1, result.getVersion());
    expect(result.getProcessInstanceKey() > 0, "an instance key");
    expectNumber("sum", 42, result.getVariablesAsMap().get("sum"));
    expectNumber("a", 40, result.getVariablesAsMap().get("a"));
  }

  private static void createWithResultFetch() {
    final ProcessInstanceResult result =
        join(
            client
                .newCreateInstanceCommand()
                .bpmnProcessId("java-sum")
                .latestVersion()
                .variables(Map.of("a", 1, "b", 2))
                .withResult()
                .fetchVariables("sum", "b")
                .send());
    expectEquals("fetched variable names", Set.of("sum", "b"), result.getVariablesAsMap().keySet());
    expectNumber("sum", 3, result.getVariablesAsMap().get("sum"));
  }

  private static void createStartBefore() {
    final ZeebeFuture<ProcessInstanceResult> result =
        client
            .newCreateInstanceCommand()
            .bpmnProcessId("java-order")
            .latestVersion()
            .variables(Map.of("orderId", "order-direct"))
            .startBeforeElement("await-payment")
            .withResult()
            .requestTimeout(Duration.ofSeconds(JOIN_SECONDS))
            .send();
    join(
        client
            .newPublishMessageCommand()
            .messageName("java-payment")
            .correlationKey("order-direct")
            .timeToLive(Duration.ofMinutes(1))
            .variables(Map.of("paid", 5))
            .send());
    final Map<String, Object> variables = join(result).getVariablesAsMap();
    expectNumber("paid", 5, variables.get("paid"));
    expect(!variables.containsKey("shippedWith"), "the receive task was skipped, got " + variables);
  }

  private static void variablesRoundTrip() throws Exception {
    final String json =
        "{\"text\":\"gr\u00fc\u00dfe \u2713 \\\"quoted\\\" \\n line\",\"int\":42,"
            + "\"big\":9007199254740993,\"negative\":-7,\"float\":1.5,\"yes\":true,"
            + "\"no\":false,\"nothing\":null,\"list\":[1,\"two\",{\"three\":3},[]],"
            + "\"nested\":{\"a\":{\"b\":{}}}}";
    final ProcessInstanceResult result =
        join(
            client
                .newCreateInstanceCommand()
                .bpmnProcessId("java-echo")
                .latestVersion()
                .variables(json)
                .withResult()
                .send());
    final var mapper = new com.fasterxml.jackson.databind.ObjectMapper();
    final var sent = mapper.readTree(json);
    final var received = mapper.readTree(result.getVariables());
    if (!sent.equals(received)) {
      throw new AssertionError("sent " + sent + ", got back " + received);
    }
  }

  /** The numbers {@link #randomNumbers} sends, in the client's own types. */
  @com.fasterxml.jackson.annotation.JsonIgnoreProperties(ignoreUnknown = true)
  public static final class Numbers {
    public List<Double> doubles;
    public List<Long> longs;
  }

  /** The variables the numbers job completes with: the same numbers under other names. */
  @com.fasterxml.jackson.annotation.JsonIgnoreProperties(ignoreUnknown = true)
  public static final class NumbersBack {
    public List<Double> doublesBack;
    public List<Long> longsBack;
  }

  /** Equal in Java's types: {@code Double.equals} compares bits, so -0.0 and 0.0 differ. */
  private static void expectSameNumbers(final String what, final Numbers sent, final List<Double> doubles,
      final List<Long> longs) {
    expectEquals(what + ": count of doubles", sent.doubles.size(), doubles == null ? -1 : doubles.size());
    for (int i = 0; i < sent.doubles.size(); i++) {
      if (!sent.doubles.get(i).equals(doubles.get(i))) {
        throw new AssertionError(what + ": double " + i + " went in as " + sent.doubles.get(i)
            + " and came back as " + doubles.get(i));
      }
    }
    expectEquals(what + ": longs", sent.longs, longs);
  }

  /**
   * Numbers as a Java worker holds them: 200 random doubles in [0, 1) (ids and amounts), 100 of
   * any exponent (random bit patterns) and longs beyond 2^53, through create, job activation,
   * completion and the instance's result, compared in {@code double} and {@code long}.
   */
  private static void randomNumbers() {
    join(
        client
            .newDeployResourceCommand()
            .addProcessModel(serviceTaskProcess("java-numbers", "java-numbers"), "java-numbers.bpmn")
            .send());
    final long seed = System.nanoTime();
    final java.util.Random random = new java.util.Random(seed);
    final Numbers sent = new Numbers();
    sent.doubles = new ArrayList<>();
    while (sent.doubles.size() < 200) {
      sent.doubles.add(random.nextDouble());
    }
    while (sent.doubles.size() < 300) {
      final double d = Double.longBitsToDouble(random.nextLong());
      if (Double.isFinite(d)) {
        sent.doubles.add(d);
      }
    }
    sent.longs =
        List.of(Long.MAX_VALUE, Long.MIN_VALUE, (1L << 53) + 1, -((1L << 53) + 1), random.nextLong(), random.nextLong());
    final ZeebeFuture<ProcessInstanceResult> pending =
        client
            .newCreateInstanceCommand()
            .bpmnProcessId("java-numbers")
            .latestVersion()
            .variables(sent)
            .withResult()
            .requestTimeout(Duration.ofSeconds(JOIN_SECONDS))
            .send();
    final ActivatedJob job = activateOne("java-numbers", Duration.ofSeconds(10));
    final Numbers seen = job.getVariablesAsType(Numbers.class);
    expectSameNumbers("the activated job (seed " + seed + ")", sent, seen.doubles, seen.longs);
    final NumbersBack back = new NumbersBack();
    back.doublesBack = seen.doubles;
    back.longsBack = seen.longs;
    join(client.newCompleteCommand(job.getKey()).variables(back).send());
    final ProcessInstanceResult result = join(pending);
    final Numbers kept = result.getVariablesAsType(Numbers.class);
    expectSameNumbers("the instance's result (seed " + seed + ")", sent, kept.doubles, kept.longs);
    final NumbersBack returned = result.getVariablesAsType(NumbersBack.class);
    expectSameNumbers(
        "the completed job's variables in the result (seed " + seed + ")", sent, returned.doublesBack,
        returned.longsBack);
  }

  private static void largeVariable() {
    final String big = "0123456789abcdef".repeat(64 * 1024);
    final ProcessInstanceResult result =
        join(
            client
                .newCreateInstanceCommand()
                .bpmnProcessId("java-echo")
                .latestVersion()
                .variables(Map.of("big", big))
                .withResult()
                .send());
    final Object back = result.getVariablesAsMap().get("big");
    expect(big.equals(back), "the 1 MiB string came back changed (length "
        + (back instanceof String text ? text.length() : -1) + ")");
  }

  private static void deprecatedDeploy() {
    final BpmnModelInstance legacy = serviceTaskProcess("java-legacy", "java-legacy");
    @SuppressWarnings("deprecation")
    final DeploymentEvent deployment =
        join(client.newDeployCommand().addProcessModel(legacy, "java-legacy.bpmn").send());
    expectEquals("processes", 1, deployment.getProcesses().size());
    expectEquals("process id", "java-legacy", deployment.getProcesses().get(0).getBpmnProcessId());
    expectEquals("version", 1, deployment.getProcesses().get(0).getVersion());
    join(client.newCreateInstanceCommand().bpmnProcessId("java-legacy").latestVersion().send());
  }

  private static void timer() {
    final long start = System.nanoTime();
    join(
        client
            .newCreateInstanceCommand()
            .bpmnProcessId("java-timer")
            .latestVersion()
            .withResult()
            .requestTimeout(Duration.ofSeconds(JOIN_SECONDS))
            .send());
    final long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
    expect(ms >= 900, "the 1 s timer fired after " + ms + " ms");
    expect(ms < 10_000, "the 1 s timer fired only after " + ms + " ms");
  }

  private static void longPoll() throws InterruptedException {
    final long start = System.nanoTime();
    final var poll =
        client
            .newActivateJobsCommand()
            .jobType("java-legacy")
            .maxJobsToActivate(5)
            .timeout(Duration.ofMinutes(1))
            .requestTimeout(Duration.ofSeconds(15))
            .send();
    // The instance created by the deprecated deployment check already waits: take it first.
    final List<ActivatedJob> first = join(poll).getJobs();
    for (final ActivatedJob job : first) {
      join(client.newCompleteCommand(job).send());
    }
    final var waiting =
        client
            .newActivateJobsCommand()
            .jobType("java-legacy")
            .maxJobsToActivate(1)
            .timeout(Duration.ofMinutes(1))
            .requestTimeout(Duration.ofSeconds(15))
            .send();
    Thread.sleep(1000);
    if (waiting.isDone()) {
      throw new AssertionError("the long poll answered before any job existed: " + describeDone(waiting));
    }
    final long created = System.nanoTime();
    final long instance = createOne("java-legacy", Map.of());
    final List<ActivatedJob> jobs = join(waiting).getJobs();
    final long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - created);
    expectEquals("jobs from the long poll", 1, jobs.size());
    expectEquals("instance of the job", instance, jobs.get(0).getProcessInstanceKey());
    expect(ms < 3000, "the long poll answered " + ms + " ms after the job was created");
    join(client.newCompleteCommand(jobs.get(0)).send());
    expect(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start) < 20_000, "long poll check too slow");
  }

  private static String describeDone(final ZeebeFuture<?> future) {
    try {
      return String.valueOf(future.join());
    } catch (final RuntimeException e) {
      return e.toString();
    }
  }

  private static void fetchVariables() {
    createOne("java-legacy", Map.of("wanted", 1, "unwanted", 2, "other", "x"));
    final List<ActivatedJob> jobs =
        join(
                client
                    .newActivateJobsCommand()
                    .jobType("java-legacy")
                    .maxJobsToActivate(1)
                    .fetchVariables("wanted", "missing")
                    .requestTimeout(Duration.ofSeconds(10))
                    .send())
            .getJobs();
    expectEquals("jobs", 1, jobs.size());
    expectEquals("variables of the job", Map.of("wanted", 1), jobs.get(0).getVariablesAsMap());
    join(client.newCompleteCommand(jobs.get(0)).send());
  }

  private static void pollingWorker() {
    final Map<Long, String> workers = new ConcurrentHashMap<>();
    final JobWorker worker =
        client
            .newWorker()
            .jobType("java-poll")
            .handler(
                (jobClient, job) -> {
                  workers.put(job.getKey(), job.getWorker());
                  final Number n = (Number) job.getVariablesAsMap().get("n");
                  jobClient
                      .newCompleteCommand(job)
                      .variables(Map.of("doubled", n.intValue() * 2, "by", "poll"))
                      .send()
                      .join();
                })
            .name("java-poller")
            .timeout(Duration.ofMinutes(1))
            .pollInterval(Duration.ofMillis(100))
            .requestTimeout(Duration.ofSeconds(5))
            .streamEnabled(false)
            .open();
    try {
      final List<ZeebeFuture<ProcessInstanceResult>> results = new ArrayList<>();
      for (int n = 1; n <= 4; n++) {
        results.add(
            client
                .newCreateInstanceCommand()
                .bpmnProcessId("java-poll")
                .latestVersion()
                .variables(Map.of("n", n))
                .withResult()
                .requestTimeout(Duration.ofSeconds(JOIN_SECONDS))
                .send());
      }
      final Set<Integer> seen = new TreeSet<>();
      for (int n = 1; n <= 4; n++) {
        final ProcessInstanceResult result = join(results.get(n - 1));
        expectNumber("doubled of instance n=" + n, 2 * n, result.getVariablesAsMap().get("doubled"));
        expectEquals("by", "poll", result.getVariablesAsMap().get("by"));
        seen.add(partitionOf(result.getProcessInstanceKey()));
      }
      expectEquals("partitions of the worked instances", allPartitions(), seen);
      expectEquals("jobs handled", 4, workers.size());
      expect(workers.values().stream().allMatch("java-poller"::equals), "worker name on the jobs: " + workers);
    } finally {
      worker.close();
    }
  }

  private static void streamingWorker() throws InterruptedException {
    final Set<Long> handled = ConcurrentHashMap.newKeySet();
    // The worker's first poll is scheduled one poll interval after opening: with an interval
    // of an hour it never polls here, so every job must come through StreamActivatedJobs.
    final JobWorker worker =
        client
            .newWorker()
            .jobType("java-stream")
            .handler(
                (jobClient, job) -> {
                  handled.add(job.getKey());
                  jobClient
                      .newCompleteCommand(job.getKey())
                      .variables(Map.of("by", "stream", "retriesSeen", job.getRetries()))
                      .send()
                      .join();
                })
            .name("java-streamer")
            .timeout(Duration.ofMinutes(1))
            .pollInterval(Duration.ofHours(1))
            .streamEnabled(true)
            .open();
    try {
      // Give the stream a moment to be registered with the gateway.
      Thread.sleep(1000);
      final List<ZeebeFuture<ProcessInstanceResult>> results = new ArrayList<>();
      for (int i = 0; i < 4; i++) {
        results.add(
            client
                .newCreateInstanceCommand()
                .bpmnProcessId("java-stream")
                .latestVersion()
                .withResult()
                .requestTimeout(Duration.ofSeconds(JOIN_SECONDS))
                .send());
      }
      final Set<Integer> seen = new TreeSet<>();
      for (final var future : results) {
        final ProcessInstanceResult result = join(future);
        expectEquals("by", "stream", result.getVariablesAsMap().get("by"));
        expectNumber("retries seen by the worker", 3, result.getVariablesAsMap().get("retriesSeen"));
        seen.add(partitionOf(result.getProcessInstanceKey()));
      }
      expectEquals("partitions of the streamed instances", allPartitions(), seen);
      expectEquals("jobs handled", 4, handled.size());
    } finally {
      worker.close();
    }
  }

  private static void failWithBackoff() {
    final long instance = createOne("java-fail", Map.of());
    ActivatedJob job = activateOne("java-fail", Duration.ofSeconds(10));
    expectEquals("instance of the job", instance, job.getProcessInstanceKey());
    expectEquals("initial retries", 3, job.getRetries());
    expectEquals("element id", "work", job.getElementId());
    expectEquals("bpmn process id", "java-fail", job.getBpmnProcessId());
    expectEquals("process definition version", 1, job.getProcessDefinitionVersion());
    expect(job.getProcessDefinitionKey() > 0, "a process definition key on the job");
    expectEquals("partition of the job", partitionOf(instance), partitionOf(job.getKey()));
    expectEquals("custom headers", Map.of("owner", "java-compat"), job.getCustomHeaders());
    expectEquals("worker", "java-compat", job.getWorker());
    expectEquals("tenant", "<default>", job.getTenantId());
    final long untilDeadline = job.getDeadline() - System.currentTimeMillis();
    expect(
        untilDeadline > 50_000 && untilDeadline <= 61_000,
        "deadline about a minute ahead (the activation's timeout), got " + untilDeadline + " ms");

    final long failedAt = System.nanoTime();
    join(
        client
            .newFailCommand(job)
            .retries(2)
            .retryBackoff(Duration.ofSeconds(2))
            .errorMessage("transient trouble")
            .send());
    expectNone("java-fail", Duration.ofMillis(500), "during the 2 s back-off");
    job = activateOne("java-fail", Duration.ofSeconds(10));
    final long waitedMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - failedAt);
    expect(waitedMs >= 1800, "the job came back after " + waitedMs + " ms, before its 2 s back-off");
    expectEquals("retries after the failure", 2, job.getRetries());

    // Without a back-off the job is activatable at once.
    join(client.newFailCommand(job.getKey()).retries(1).errorMessage("again").send());
    job = activateOne("java-fail", Duration.ofSeconds(5));
    expectEquals("retries after the second failure", 1, job.getRetries());
    join(client.newCompleteCommand(job).send());
  }

  private static void incident() {
    final long instance = createOne("java-fail", Map.of());
    ActivatedJob job = activateOne("java-fail", Duration.ofSeconds(10));
    expectEquals("instance of the job", instance, job.getProcessInstanceKey());
    join(client.newFailCommand(job).retries(0).errorMessage("permanent trouble").send());
    expectNone("java-fail", Duration.ofMillis(500), "after failing with 0 retries");

    join(client.newUpdateRetriesCommand(job.getKey()).retries(2).send());
    // The job stays failed (its incident is open) until the incident is resolved.
    expectNone("java-fail", Duration.ofMillis(500), "after updating retries but before resolving");

    // The gRPC API has no incident query (Zeebe users read incidents from Operate or the REST
    // API, which Beeline lacks). Keys on a partition are a counter, and the incident is the
    // first entity created on the job's partition after the job, so it is one of the keys
    // after the job's: resolve those in turn; the others must answer NOT_FOUND.
    long incidentKey = -1;
    for (long candidate = job.getKey() + 1; candidate <= job.getKey() + 200; candidate++) {
      try {
        join(client.newResolveIncidentCommand(candidate).send());
        incidentKey = candidate;
        break;
      } catch (final ClientStatusException e) {
        if (e.getStatusCode() != Status.Code.NOT_FOUND) {
          throw new AssertionError(
              "resolving key " + candidate + " (not an incident): expected NOT_FOUND, got "
                  + e.getStatusCode() + ": " + e.getMessage(), e);
        }
      }
    }
    expect(incidentKey > 0, "no incident among the 200 keys after the job's key " + job.getKey());
    expectEquals("partition of the incident", partitionOf(job.getKey()), partitionOf(incidentKey));

    job = activateOne("java-fail", Duration.ofSeconds(10));
    expectEquals("instance of the reactivated job", instance, job.getProcessInstanceKey());
    expectEquals("retries of the reactivated job", 2, job.getRetries());
    join(client.newCompleteCommand(job).send());

    // A resolved incident is gone.
    final long resolved = incidentKey;
    expectStatus(Status.Code.NOT_FOUND, null, () -> client.newResolveIncidentCommand(resolved).send());
  }

  private static void throwError() {
    final ZeebeFuture<ProcessInstanceResult> result =
        client
            .newCreateInstanceCommand()
            .bpmnProcessId("java-error")
            .latestVersion()
            .withResult()
            .requestTimeout(Duration.ofSeconds(JOIN_SECONDS))
            .send();
    final ActivatedJob job = activateOne("java-risky", Duration.ofSeconds(10));
    join(
        client
            .newThrowErrorCommand(job)
            .errorCode("NOT_AVAILABLE")
            .errorMessage("out of stock")
            .variables(Map.of("reason", "stock"))
            .send());
    final Map<String, Object> variables = join(result).getVariablesAsMap();
    expectEquals("path taken", "caught", variables.get("path"));
    // Without output mappings on the catch event, the error's variables propagate up.
    expectEquals("variable thrown with the error", "stock", variables.get("reason"));
  }

  private static void updateTimeout() {
    final long instance = createOne("java-timeout", Map.of());
    ActivatedJob job =
        join(
                client
                    .newActivateJobsCommand()
                    .jobType("java-timeout")
                    .maxJobsToActivate(1)
                    .timeout(Duration.ofMinutes(10))
                    .requestTimeout(Duration.ofSeconds(10))
                    .send())
            .getJobs()
            .get(0);
    expectEquals("instance of the job", instance, job.getProcessInstanceKey());
    final long firstDeadline = job.getDeadline();
    expectNone("java-timeout", Duration.ofMillis(500), "while activated with a 10 minute timeout");
    join(client.newUpdateTimeoutCommand(job).timeout(Duration.ofSeconds(1)).send());
    final long updatedAt = System.nanoTime();
    job = activateOne("java-timeout", Duration.ofSeconds(15));
    final long waitedMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - updatedAt);
    expectEquals("instance of the timed-out job", instance, job.getProcessInstanceKey());
    expect(waitedMs >= 800, "the job came back after " + waitedMs + " ms, before its new 1 s timeout");
    expect(job.getDeadline() != firstDeadline, "a new deadline on reactivation");
    join(client.newCompleteCommand(job).send());
  }

  private static void setVariables() {
    final ZeebeFuture<ProcessInstanceResult> result =
        client
            .newCreateInstanceCommand()
            .bpmnProcessId("java-vars")
            .latestVersion()
            .variables(Map.of("existing", 0))
            .withResult()
            .requestTimeout(Duration.ofSeconds(JOIN_SECONDS))
            .send();
    ActivatedJob job = activateOne("java-vars", Duration.ofSeconds(10));
    final long instance = job.getProcessInstanceKey();

    final var global =
        join(client.newSetVariablesCommand(instance).variables(Map.of("global", "g")).send());
    expect(global.getKey() > 0, "a key for the variable document");
    // Local: only on the task's own scope, gone when the task completes.
    join(
        client
            .newSetVariablesCommand(job.getElementInstanceKey())
            .variables(Map.of("local", "l"))
            .local(true)
            .send());
    // Not local: an existing variable is updated where it lives (the process), a new one is
    // created at the top (the process).
    join(
        client
            .newSetVariablesCommand(job.getElementInstanceKey())
            .variables(Map.of("existing", 1, "propagated", "p"))
            .local(false)
            .send());

    // Fail without back-off to see the variables on a fresh activation.
    join(client.newFailCommand(job).retries(1).send());
    job = activateOne("java-vars", Duration.ofSeconds(10));
    final Map<String, Object> seen = job.getVariablesAsMap();
    expectEquals("global variable seen by the job", "g", seen.get("global"));
    expectEquals("local variable seen by the job", "l", seen.get("local"));
    expectEquals("propagated variable seen by the job", "p", seen.get("propagated"));
    expectNumber("updated variable seen by the job", 1, seen.get("existing"));
    join(client.newCompleteCommand(job).send());

    final Map<String, Object> finals = join(result).getVariablesAsMap();
    expectEquals("global variable at the end", "g", finals.get("global"));
    expectEquals("propagated variable at the end", "p", finals.get("propagated"));
    expectNumber("updated variable at the end", 1, finals.get("existing"));
    expect(!finals.containsKey("local"), "the local variable leaked to the process: " + finals);

    expectStatus(
        Status.Code.NOT_FOUND,
        null,
        () -> client.newSetVariablesCommand(instance).variables(Map.of("late", 1)).send());
  }

  private static void cancel() {
    final long instance = createOne("java-cancel", Map.of());
    // The job exists before the cancellation...
    final ActivatedJob job = activateOne("java-cancel", Duration.ofSeconds(10));
    expectEquals("instance of the job", instance, job.getProcessInstanceKey());
    join(client.newCancelInstanceCommand(instance).send());
    // ...and is gone after it.
    expectStatus(Status.Code.NOT_FOUND, null, () -> client.newCompleteCommand(job).send());
    expectStatus(
        Status.Code.NOT_FOUND,
        "process instance",
        () -> client.newCancelInstanceCommand(instance).send());
  }

  private static void publishRouting() {
    final Set<Integer> seen = new TreeSet<>();
    for (int i = 0; i < 8; i++) {
      final String correlationKey = "routing-" + i;
      final PublishMessageResponse response =
          join(
              client
                  .newPublishMessageCommand()
                  .messageName("java-nobody-waits")
                  .correlationKey(correlationKey)
                  .timeToLive(Duration.ZERO)
                  .send());
      final int expected = zeebePartitionOf(correlationKey);
      expectEquals("partition of the message keyed '" + correlationKey + "'", expected, partitionOf(response.getMessageKey()));
      seen.add(expected);
    }
    expectEquals("partitions the test keys hash to", allPartitions(), seen);
  }

  private static void publishCorrelates() throws InterruptedException {
    final List<ZeebeFuture<ProcessInstanceResult>> results = new ArrayList<>();
    final int count = 4;
    for (int i = 0; i < count; i++) {
      results.add(
          client
              .newCreateInstanceCommand()
              .bpmnProcessId("java-order")
              .latestVersion()
              .variables(Map.of("orderId", "order-" + i))
              .withResult()
              .requestTimeout(Duration.ofSeconds(JOIN_SECONDS))
              .send());
    }
    // Let the instances reach their receive task (the messages have a TTL anyway).
    Thread.sleep(300);
    for (int i = 0; i < count; i++) {
      join(
          client
              .newPublishMessageCommand()
              .messageName("java-shipment")
              .correlationKey("order-" + i)
              .timeToLive(Duration.ofMinutes(1))
              .variables(Map.of("shippedWith", "carrier-" + i))
              .send());
    }
    Thread.sleep(300);
    for (int i = 0; i < count; i++) {
      join(
          client
              .newPublishMessageCommand()
              .messageName("java-payment")
              .correlationKey("order-" + i)
              .messageId("payment-" + i)
              .timeToLive(Duration.ofMinutes(1))
              .variables(Map.of("paid", 10 * i))
              .send());
    }
    final Set<Integer> instancePartitions = new TreeSet<>();
    final Set<Integer> messagePartitions = new TreeSet<>();
    for (int i = 0; i < count; i++) {
      final ProcessInstanceResult result = join(results.get(i));
      final Map<String, Object> variables = result.getVariablesAsMap();
      expectEquals("order-" + i + " shipped with", "carrier-" + i, variables.get("shippedWith"));
      expectNumber("order-" + i + " paid", 10 * i, variables.get("paid"));
      instancePartitions.add(partitionOf(result.getProcessInstanceKey()));
      messagePartitions.add(zeebePartitionOf("order-" + i));
    }
    expectEquals("partitions of the instances", allPartitions(), instancePartitions);
    expectEquals("partitions of the messages", allPartitions(), messagePartitions);
  }

  private static void publishBuffered() {
    join(
        client
            .newPublishMessageCommand()
            .messageName("java-shipment")
            .correlationKey("order-early")
            .timeToLive(Duration.ofMinutes(1))
            .variables(Map.of("shippedWith", "early-bird"))
            .send());
    join(
        client
            .newPublishMessageCommand()
            .messageName("java-payment")
            .correlationKey("order-early")
            .timeToLive(Duration.ofMinutes(1))
            .variables(Map.of("paid", 99))
            .send());
    final ProcessInstanceResult result =
        join(
            client
                .newCreateInstanceCommand()
                .bpmnProcessId("java-order")
                .latestVersion()
                .variables(Map.of("orderId", "order-early"))
                .withResult()
                .requestTimeout(Duration.ofSeconds(JOIN_SECONDS))
                .send());
    expectEquals("shipped with", "early-bird", result.getVariablesAsMap().get("shippedWith"));
    expectNumber("paid", 99, result.getVariablesAsMap().get("paid"));
  }

  private static void publishDuplicate() {
    final PublishMessageResponse first =
        join(
            client
                .newPublishMessageCommand()
                .messageName("java-duplicate")
                .correlationKey("dup-1")
                .messageId("java-msg-1")
                .timeToLive(Duration.ofMinutes(1))
                .send());
    expect(first.getMessageKey() > 0, "a message key");
    expectStatus(
        Status.Code.ALREADY_EXISTS,
        "java-msg-1",
        () ->
            client
                .newPublishMessageCommand()
                .messageName("java-duplicate")
                .correlationKey("dup-1")
                .messageId("java-msg-1")
                .timeToLive(Duration.ofMinutes(1))
                .send());
    // The same id under another name or key is a different message.
    join(
        client
            .newPublishMessageCommand()
            .messageName("java-duplicate")
            .correlationKey("dup-2")
            .messageId("java-msg-1")
            .timeToLive(Duration.ofMinutes(1))
            .send());
  }

  private static void messageStart() {
    final PublishMessageResponse response =
        join(
            client
                .newPublishMessageCommand()
                .messageName("java-new-order")
                .withoutCorrelationKey()
                .variables(Map.of("item", "book"))
                .send());
    expect(response.getMessageKey() > 0, "a message key");
    final ActivatedJob job = activateOne("java-new-order", Duration.ofSeconds(10));
    expectEquals("process started by the message", "java-message-start", job.getBpmnProcessId());
    expectEquals("message variable in the started instance", "book", job.getVariablesAsMap().get("item"));
    join(client.newCompleteCommand(job).send());
  }

  private static void signal() {
    final Set<Long> waiting = new HashSet<>();
    for (int i = 0; i < 2 * partitions; i++) {
      waiting.add(createOne("java-signal-catch", Map.of("waiter", i)));
    }
    final Set<Integer> waitingPartitions = new TreeSet<>();
    waiting.forEach(key -> waitingPartitions.add(partitionOf(key)));
    expectEquals("partitions of the waiting instances", allPartitions(), waitingPartitions);

    final var response =
        join(client.newBroadcastSignalCommand().signalName("java-go").variables(Map.of("go", 7)).send());
    expect(response.getKey() > 0, "a signal key");

    // The waiting instances continue...
    final Set<Long> continued = new HashSet<>();
    final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(15);
    while (continued.size() < waiting.size() && System.nanoTime() < deadline) {
      for (final ActivatedJob job : activate("java-signal-continued", 10, Duration.ofSeconds(5))) {
        expectNumber("signal variable in a continued instance", 7, job.getVariablesAsMap().get("go"));
        continued.add(job.getProcessInstanceKey());
        join(client.newCompleteCommand(job).send());
      }
    }
    expectEquals("instances continued by the signal", waiting, continued);

    // ...and exactly one new instance starts.
    final ActivatedJob started = activateOne("java-signal-started", Duration.ofSeconds(10));
    expectEquals("process started by the signal", "java-signal-start", started.getBpmnProcessId());
    expectNumber("signal variable in the started instance", 7, started.getVariablesAsMap().get("go"));
    join(client.newCompleteCommand(started).send());
    expectNone("java-signal-started", Duration.ofMillis(500), "a second instance started by one signal");
  }

  private static void evaluateById() {
    final EvaluateDecisionResponse response =
        join(
            client
                .newEvaluateDecisionCommand()
                .decisionId("java-discount")
                .variables(Map.of("customer", "gold"))
                .send());
    expectEquals("decision id", "java-discount", response.getDecisionId());
    expectEquals("decision key", discountDecisionKey, response.getDecisionKey());
    expectEquals("decision version", 1, response.getDecisionVersion());
    expectEquals("decision name", "Discount", response.getDecisionName());
    expectEquals("decision requirements id", "java-pricing", response.getDecisionRequirementsId());
    expectEquals("decision output", "0.2", response.getDecisionOutput());
    expect(
        response.getFailureMessage() == null || response.getFailureMessage().isEmpty(),
        "no failure message, got '" + response.getFailureMessage() + "'");
    expectEquals("evaluated decisions", 1, response.getEvaluatedDecisions().size());
    final var evaluated = response.getEvaluatedDecisions().get(0);
    expectEquals("evaluated decision type", "DECISION_TABLE", evaluated.getDecisionType());
    expectEquals("evaluated inputs", 1, evaluated.getEvaluatedInputs().size());
    expectEquals("input value", "\"gold\"", evaluated.getEvaluatedInputs().get(0).getInputValue());
    expectEquals("matched rules", 1, evaluated.getMatchedRules().size());
    expectEquals("matched rule", "gold", evaluated.getMatchedRules().get(0).getRuleId());
    expectEquals("rule index", 1, evaluated.getMatchedRules().get(0).getRuleIndex());
    expectEquals(
        "output of the matched rule",
        "0.2",
        evaluated.getMatchedRules().get(0).getEvaluatedOutputs().get(0).getOutputValue());
    expect(response.getDecisionInstanceKey() > 0, "a decision instance key");
  }

  private static void evaluateByKey() {
    final EvaluateDecisionResponse response =
        join(
            client
                .newEvaluateDecisionCommand()
                .decisionKey(discountDecisionKey)
                .variables(Map.of("customer", "nobody"))
                .send());
    expectEquals("decision id", "java-discount", response.getDecisionId());
    expectEquals("decision output", "0", response.getDecisionOutput());
    expectEquals(
        "matched rule", "anyone", response.getEvaluatedDecisions().get(0).getMatchedRules().get(0).getRuleId());
  }

  private static void businessRuleTask() {
    final ProcessInstanceResult result =
        join(
            client
                .newCreateInstanceCommand()
                .bpmnProcessId("java-rule")
                .latestVersion()
                .variables(Map.of("customer", "silver"))
                .withResult()
                .send());
    expectNumber("discount", 0.1, result.getVariablesAsMap().get("discount"));
  }

  private static void evaluateUnknown() {
    expectStatus(
        Status.Code.NOT_FOUND,
        "java-no-such-decision",
        () -> client.newEvaluateDecisionCommand().decisionId("java-no-such-decision").send());
  }

  private static void unknownProcess() {
    expectStatus(
        Status.Code.NOT_FOUND,
        "java-no-such-process",
        () -> client.newCreateInstanceCommand().bpmnProcessId("java-no-such-process").latestVersion().send());
  }

  private static void invalidVariables() {
    expectStatus(
        Status.Code.INVALID_ARGUMENT,
        "variables",
        () ->
            client
                .newCreateInstanceCommand()
                .bpmnProcessId("java-sum")
                .latestVersion()
                .variables("[1, 2, 3]")
                .send());
    expectStatus(
        Status.Code.INVALID_ARGUMENT,
        "variables",
        () ->
            client
                .newPublishMessageCommand()
                .messageName("java-invalid")
                .correlationKey("k")
                .variables("\"a string\"")
                .send());
  }

  private static void retriesZero() {
    final long instance = createOne("java-cancel", Map.of());
    try {
      final ActivatedJob job = activateOne("java-cancel", Duration.ofSeconds(10));
      expectStatus(
          Status.Code.INVALID_ARGUMENT,
          "retries",
          () -> client.newUpdateRetriesCommand(job.getKey()).retries(0).send());
      expectStatus(
          Status.Code.NOT_FOUND,
          null,
          () -> client.newUpdateRetriesCommand((1L << KEY_BITS) + 999_999_998L).retries(1).send());
    } finally {
      join(client.newCancelInstanceCommand(instance).send());
    }
  }

  private static void callEach() {
    join(
        client
            .newDeployResourceCommand()
            .addProcessModel(childProcess(), "java-child.bpmn")
            .addProcessModel(callEachProcess(), "java-call-each.bpmn")
            .send());
    final Set<Long> children = ConcurrentHashMap.newKeySet();
    final JobWorker worker =
        client
            .newWorker()
            .jobType("java-child-work")
            .handler(
                (jobClient, job) -> {
                  children.add(job.getProcessInstanceKey());
                  final Object item = job.getVariablesAsMap().get("item");
                  jobClient
                      .newCompleteCommand(job.getKey())
                      .variables(Map.of("shipped", item + "!"))
                      .send()
                      .join();
                })
            .open();
    try {
      final ProcessInstanceResult result =
          join(
              client
                  .newCreateInstanceCommand()
                  .bpmnProcessId("java-call-each")
                  .latestVersion()
                  .variables(Map.of("items", List.of("a", "b", "c")))
                  .withResult()
                  .send());
      expectEquals("results", List.of("a!", "b!", "c!"), result.getVariablesAsMap().get("results"));
      expectEquals("child instances", 3, children.size());
      expect(
          !children.contains(result.getProcessInstanceKey()),
          "the jobs belong to the called instances, not to the caller");
    } finally {
      worker.close();
    }
  }

  private static void userTask() {
    join(
        client
            .newDeployResourceCommand()
            .addProcessModel(userTaskProcess(), "java-user-task.bpmn")
            .send());
    final ZeebeFuture<ProcessInstanceResult> result =
        client
            .newCreateInstanceCommand()
            .bpmnProcessId("java-user-task")
            .latestVersion()
            .withResult()
            .send();
    final List<ActivatedJob> jobs = new ArrayList<>();
    for (int attempt = 0; attempt < 50 && jobs.isEmpty(); attempt++) {
      jobs.addAll(
          join(
                  client
                      .newActivateJobsCommand()
                      .jobType("io.camunda.zeebe:userTask")
                      .maxJobsToActivate(1)
                      .requestTimeout(Duration.ofSeconds(1))
                      .send())
              .getJobs());
    }
    expectEquals("user task jobs", 1, jobs.size());
    final ActivatedJob job = jobs.get(0);
    expectEquals("retries", 1, job.getRetries());
    final Map<String, String> headers = job.getCustomHeaders();
    expectEquals("assignee header", "ann", headers.get("io.camunda.zeebe:assignee"));
    expectEquals(
        "candidate groups header",
        "[\"sales\",\"support\"]",
        headers.get("io.camunda.zeebe:candidateGroups"));
    expectEquals("due date header", "2030-01-31T17:00Z", headers.get("io.camunda.zeebe:dueDate"));
    expectEquals(
        "form key header", "camunda-forms:bpmn:approve-form", headers.get("io.camunda.zeebe:formKey"));
    join(client.newCompleteCommand(job.getKey()).variables(Map.of("approved", true)).send());
    expectEquals("approved", true, join(result).getVariablesAsMap().get("approved"));
  }

  private static void oversized() {
    final String huge = "x".repeat(5 * 1024 * 1024);
    expectStatus(
        Status.Code.RESOURCE_EXHAUSTED,
        null,
        () ->
            client
                .newCreateInstanceCommand()
                .bpmnProcessId("java-echo")
                .latestVersion()
                .variables(Map.of("huge", huge))
                .send());
    join(client.newTopologyRequest().send());
    createOne("java-echo", Map.of());
  }

  private static void unknownJob() {
    // A key on partition 1 that was never handed out.
    final long neverUsed = (1L << KEY_BITS) + 999_999_999L;
    expectStatus(Status.Code.NOT_FOUND, null, () -> client.newCompleteCommand(neverUsed).send());
  }

  // ---------------------------------------------------------------------------------------
  // Helpers
  // ---------------------------------------------------------------------------------------

  @FunctionalInterface
  private interface Check {
    void run() throws Exception;
  }

  /** BEELINE_JAVA_CHECKS=<regex>: run only the matching checks (and the first deployment). */
  private static final java.util.regex.Pattern ONLY =
      java.util.regex.Pattern.compile(
          System.getenv().getOrDefault("BEELINE_JAVA_CHECKS", ".*"));

  private static void check(final String name, final Check body) {
    if (!ONLY.matcher(name).find() && !name.startsWith("deploy: BPMN and DMN")) {
      return;
    }
    checks++;
    final long start = System.nanoTime();
    try {
      body.run();
      System.out.println("ok    " + name);
    } catch (final Throwable t) {
      failures++;
      System.out.println("FAIL  " + name + ": " + describe(t));
    }
    final long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
    if (ms > 5000) {
      System.out.println("      (took " + ms + " ms)");
    }
    System.out.flush();
  }

  private static String describe(final Throwable t) {
    if (t instanceof AssertionError) {
      return t.getMessage();
    }
    if (t instanceof ClientStatusException e) {
      return "unexpected gRPC " + e.getStatusCode() + ": " + e.getMessage();
    }
    return t.getClass().getSimpleName() + ": " + t.getMessage();
  }

  private static <T> T join(final ZeebeFuture<T> future) {
    return future.join(JOIN_SECONDS, TimeUnit.SECONDS);
  }

  private static void expect(final boolean condition, final String what) {
    if (!condition) {
      throw new AssertionError(what);
    }
  }

  private static void expectEquals(final String what, final Object expected, final Object actual) {
    if (expected == null ? actual != null : !expected.equals(actual)) {
      throw new AssertionError(what + ": expected " + expected + ", got " + actual);
    }
  }

  private static void expectNumber(final String what, final double expected, final Object actual) {
    if (!(actual instanceof Number n) || Math.abs(n.doubleValue() - expected) > 1e-9) {
      throw new AssertionError(what + ": expected the number " + expected + ", got " + actual);
    }
  }

  /** The call must fail with this gRPC status, its message containing {@code contains}. */
  private static void expectStatus(
      final Status.Code code, final String contains, final Supplier<ZeebeFuture<?>> call) {
    try {
      final Object answer = join(call.get());
      throw new AssertionError("expected gRPC " + code + ", but the call succeeded: " + answer);
    } catch (final ClientStatusException e) {
      if (e.getStatusCode() != code) {
        throw new AssertionError("expected gRPC " + code + ", got " + e.getStatusCode() + ": " + e.getMessage());
      }
      if (contains != null && (e.getMessage() == null || !e.getMessage().contains(contains))) {
        throw new AssertionError(
            "expected the " + code + " message to mention '" + contains + "', got: " + e.getMessage());
      }
    }
  }

  private static long createOne(final String processId, final Map<String, Object> variables) {
    return join(
            client.newCreateInstanceCommand().bpmnProcessId(processId).latestVersion().variables(variables).send())
        .getProcessInstanceKey();
  }

  private static List<ActivatedJob> activate(final String type, final int max, final Duration wait) {
    return join(
            client
                .newActivateJobsCommand()
                .jobType(type)
                .maxJobsToActivate(max)
                .timeout(Duration.ofMinutes(1))
                .workerName("java-compat")
                .requestTimeout(wait)
                .send())
        .getJobs();
  }

  private static ActivatedJob activateOne(final String type, final Duration wait) {
    final List<ActivatedJob> jobs = activate(type, 1, wait);
    expect(jobs.size() == 1, "expected one job of type " + type + " within " + wait.toMillis() + " ms, got " + jobs.size());
    return jobs.get(0);
  }

  private static void expectNone(final String type, final Duration wait, final String when) {
    final List<ActivatedJob> jobs = activate(type, 10, wait);
    if (!jobs.isEmpty()) {
      throw new AssertionError("expected no job of type " + type + " " + when + ", got " + jobs.size() + " (first: key "
          + jobs.get(0).getKey() + ", retries " + jobs.get(0).getRetries() + ")");
    }
  }

  private static int partitionOf(final long key) {
    return (int) (key >> KEY_BITS);
  }

  private static Set<Integer> allPartitions() {
    final Set<Integer> all = new TreeSet<>();
    for (int p = 1; p <= partitions; p++) {
      all.add(p);
    }
    return all;
  }

  /**
   * Zeebe's message routing (SubscriptionUtil.getSubscriptionHashCode): Java's String.hashCode
   * recurrence over the UTF-8 bytes read as signed bytes, then |hash % partitions| + 1.
   */
  private static int zeebePartitionOf(final String correlationKey) {
    int hash = 0;
    for (final byte b : correlationKey.getBytes(StandardCharsets.UTF_8)) {
      hash = 31 * hash + b;
    }
    return Math.abs(hash % partitions) + 1;
  }
}
