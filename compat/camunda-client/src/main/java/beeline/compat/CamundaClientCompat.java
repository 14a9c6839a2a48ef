package beeline.compat;

import io.camunda.client.CamundaClient;
import io.camunda.client.api.CamundaFuture;
import io.camunda.client.api.ProblemDetail;
import io.camunda.client.api.command.ClientStatusException;
import io.camunda.client.api.command.DeployResourceCommandStep1.DeployResourceCommandStep2;
import io.camunda.client.api.command.ProblemException;
import io.camunda.client.api.response.ActivatedJob;
import io.camunda.client.api.response.BrokerInfo;
import io.camunda.client.api.response.CorrelateMessageResponse;
import io.camunda.client.api.response.DeploymentEvent;
import io.camunda.client.api.response.EvaluateDecisionResponse;
import io.camunda.client.api.response.PartitionBrokerHealth;
import io.camunda.client.api.response.PartitionBrokerRole;
import io.camunda.client.api.response.PartitionInfo;
import io.camunda.client.api.response.ProcessInstanceEvent;
import io.camunda.client.api.response.ProcessInstanceResult;
import io.camunda.client.api.response.PublishMessageResponse;
import io.camunda.client.api.response.StatusResponse;
import io.camunda.client.api.response.Topology;
import io.camunda.client.api.search.response.Incident;
import io.camunda.client.api.worker.JobWorker;
import io.camunda.zeebe.model.bpmn.Bpmn;
import io.camunda.zeebe.model.bpmn.BpmnModelInstance;
import io.grpc.Status;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Camunda's Java client, {@code CamundaClient} (io.camunda:camunda-client-java 8.8), against a
 * running Beeline node: every scenario twice, once with the client's defaults (its commands and
 * its job worker over the REST API) and once with {@code preferRestOverGrpc(false)} (the same
 * commands over gRPC; the commands the client only has over REST, such as message correlation
 * and the clock, stay on REST). One code path serves both runs; the process ids and job types
 * of a run start with its name, so the runs do not meet.
 *
 * <p>Every check prints "ok    <check>", "FAIL  <check>: <why>", or "skip  <what>: <why>" for
 * what Beeline does not serve yet (counted apart, never as a pass). Errors are checked as the
 * user sees them: a {@link ProblemException} (HTTP status, title, detail, instance) over REST, a
 * {@link ClientStatusException} (gRPC code) over gRPC. After each run, the node's request
 * metrics must show the run's commands on the transport it chose.
 *
 * <p>Usage: java beeline.compat.CamundaClientCompat <grpc host:port> <rest URL> <monitoring URL>
 * <partitions>
 */
public final class CamundaClientCompat {

  /** Zeebe's keys carry their partition: key = partition << 51 | counter. */
  private static final int KEY_BITS = 51;

  private static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(20);
  private static final long JOIN_SECONDS = 30;

  /** The run: REST (the client's default) or gRPC ({@code preferRestOverGrpc(false)}). */
  private enum Transport {
    REST("rest"),
    GRPC("grpc");

    final String prefix;

    Transport(final String prefix) {
      this.prefix = prefix;
    }
  }

  private static CamundaClient client;
  private static Transport transport;
  private static int partitions;
  private static String monitoring;
  private static int failures;
  private static int checks;
  private static int skips;

  // ---------------------------------------------------------------------------------------
  // Models, through the client's own model builder; their ids start with the run's prefix.
  // ---------------------------------------------------------------------------------------

  private static String id(final String name) {
    return transport.prefix + "-" + name;
  }

  /** A service task whose job type is the process id, between start and end. */
  private static BpmnModelInstance serviceTaskProcess(final String processId) {
    return Bpmn.createExecutableProcess(processId)
        .startEvent("start")
        .serviceTask(
            "work",
            t -> t.zeebeJobType(processId).zeebeJobRetries("3").zeebeTaskHeader("owner", "camunda-client"))
        .endEvent("end")
        .done();
  }

  private static BpmnModelInstance sumProcess() {
    return Bpmn.createExecutableProcess(id("sum"))
        .startEvent()
        .scriptTask("add", t -> t.zeebeExpression("a + b").zeebeResultVariable("sum"))
        .endEvent()
        .done();
  }

  /** A service task whose error NOT_AVAILABLE is caught by a boundary event. */
  private static BpmnModelInstance errorProcess() {
    return Bpmn.createExecutableProcess(id("error"))
        .startEvent()
        .serviceTask("risky", t -> t.zeebeJobType(id("risky")))
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
    return Bpmn.createExecutableProcess(id("vars"))
        .startEvent()
        .subProcess(
            "scope",
            s -> s.embeddedSubProcess().startEvent().serviceTask("inner", t -> t.zeebeJobType(id("vars"))).endEvent())
        .endEvent()
        .done();
  }

  private static BpmnModelInstance signalStartProcess() {
    return Bpmn.createExecutableProcess(id("signal-start"))
        .startEvent("signalled")
        .signal(id("go"))
        .serviceTask("started", t -> t.zeebeJobType(id("signal-started")))
        .endEvent()
        .done();
  }

  private static BpmnModelInstance signalCatchProcess() {
    return Bpmn.createExecutableProcess(id("signal-catch"))
        .startEvent()
        .intermediateCatchEvent("wait-for-go")
        .signal(id("go"))
        .endEvent()
        .done();
  }

  /** Waits for a message named <prefix>-payment, correlated by orderId. */
  private static BpmnModelInstance orderProcess() {
    return Bpmn.createExecutableProcess(id("order"))
        .startEvent()
        .intermediateCatchEvent("await-payment")
        .message(m -> m.name(id("payment")).zeebeCorrelationKeyExpression("orderId"))
        .endEvent()
        .done();
  }

  /** Started by a message named <prefix>-start-order. */
  private static BpmnModelInstance messageStartProcess() {
    return Bpmn.createExecutableProcess(id("message-start"))
        .startEvent("ordered")
        .message(id("start-order"))
        .serviceTask("handle", t -> t.zeebeJobType(id("message-started")))
        .endEvent()
        .done();
  }

  /** A one-hour timer: it fires when the engine's clock is pinned past it. */
  private static BpmnModelInstance timerProcess() {
    return Bpmn.createExecutableProcess(id("timer"))
        .startEvent()
        .intermediateCatchEvent("an-hour")
        .timerWithDuration("PT1H")
        .endEvent()
        .done();
  }

  /** A Camunda user task (zeebe:userTask) for the sales group, then a job to see its result. */
  private static BpmnModelInstance userTaskProcess() {
    return Bpmn.createExecutableProcess(id("approval"))
        .startEvent()
        .userTask("review", t -> t.zeebeUserTask().zeebeCandidateGroups("sales"))
        .serviceTask("reviewed", t -> t.zeebeJobType(id("reviewed")))
        .endEvent()
        .done();
  }

  private static BpmnModelInstance echoProcess() {
    return Bpmn.createExecutableProcess(id("echo")).startEvent().endEvent().done();
  }

  private static BpmnModelInstance decisionProcess() {
    return Bpmn.createExecutableProcess(id("rule"))
        .startEvent()
        .businessRuleTask(
            "decide", t -> t.zeebeCalledDecisionId(id("discount")).zeebeResultVariable("discount"))
        .endEvent()
        .done();
  }

  /** DMN 1.3: a discount by customer type. */
  private static String discountDmn() {
    return """
        <?xml version="1.0" encoding="UTF-8"?>
        <definitions xmlns="https://www.omg.org/spec/DMN/20191111/MODEL/"
            id="%1$s-pricing" name="Pricing" namespace="http://beeline.dev/compat/camunda-client">
          <decision id="%1$s-discount" name="Discount">
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
        """
        .formatted(transport.prefix);
  }

  /** The service-task processes, one per scenario, each with its own job type. */
  private static final List<String> TASKS =
      List.of(
          "poll", "twice", "fail", "incident", "update", "timeout", "cancel", "numbers", "clock", "search");

  // ---------------------------------------------------------------------------------------

  public static void main(final String[] args) throws Exception {
    if (args.length != 4) {
      System.err.println(
          "usage: CamundaClientCompat <grpc host:port> <rest URL> <monitoring URL> <partitions>");
      System.exit(2);
    }
    final URI grpc = URI.create("http://" + args[0]);
    final URI rest = URI.create(args[1]);
    monitoring = args[2];
    partitions = Integer.parseInt(args[3]);

    // A watchdog: a hanging call must fail the suite, not stall it.
    final Thread watchdog =
        new Thread(
            () -> {
              try {
                Thread.sleep(TimeUnit.SECONDS.toMillis(170));
                System.out.println("FAIL  the CamundaClient suite did not finish within 170 s");
                System.out.flush();
                Runtime.getRuntime().halt(3);
              } catch (final InterruptedException e) {
                // finished in time
              }
            });
    watchdog.setDaemon(true);
    watchdog.start();

    for (final Transport run : Transport.values()) {
      transport = run;
      System.out.println(
          run == Transport.REST
              ? "---- CamundaClient with its defaults (REST)"
              : "---- CamundaClient with preferRestOverGrpc(false) (gRPC)");
      final var builder =
          CamundaClient.newClientBuilder()
              .grpcAddress(grpc)
              .restAddress(rest)
              .defaultRequestTimeout(REQUEST_TIMEOUT);
      if (run == Transport.GRPC) {
        builder.preferRestOverGrpc(false);
      }
      final Map<String, Long> before = requestCounts();
      client = builder.build();
      try {
        runChecks();
      } finally {
        client.close();
      }
      check("metrics: the run's commands went over " + run.prefix.toUpperCase(), () -> transportUsed(before));
    }

    final String skipped = skips > 0 ? " (" + skips + " skipped)" : "";
    if (failures > 0) {
      System.out.println(failures + " of " + checks + " CamundaClient check(s) failed" + skipped);
      System.exit(1);
    }
    System.out.println("all " + checks + " CamundaClient checks passed" + skipped);
    System.exit(0);
  }

  private static void runChecks() {
    check("topology: one broker, every partition led and healthy", CamundaClientCompat::topology);
    check("status: the cluster is UP (REST only)", CamundaClientCompat::status);
    check("deploy: BPMN and DMN resources in one deployment", CamundaClientCompat::deploy);
    check("deploy: an invalid BPMN is refused, naming the problem", CamundaClientCompat::deployInvalid);
    check("create: an instance of the latest version, and by definition key", CamundaClientCompat::create);
    check("create with result: the variables, and fetchVariables limits them", CamundaClientCompat::createWithResult);
    check("create with result: waiting past the request timeout is a timeout", CamundaClientCompat::createTimesOut);
    check("worker (polling): completes jobs with variables on every partition", CamundaClientCompat::pollingWorker);
    check("complete: a job's fields, and completing it twice is NOT_FOUND", CamundaClientCompat::completeTwice);
    check("fail: retries decrease and the job comes back after its back-off", CamundaClientCompat::failWithBackoff);
    check("incident: failing with no retries, then update retries and resolve it", CamundaClientCompat::incident);
    check("throw error: caught by the error boundary event", CamundaClientCompat::throwError);
    check("update job: retries and timeout (and both at once, REST only)", CamundaClientCompat::updateJob);
    check("update timeout: a shorter timeout makes the job come back", CamundaClientCompat::updateTimeout);
    check("set variables: global and local scopes", CamundaClientCompat::setVariables);
    check("cancel: the instance and its job are gone, cancelling again is NOT_FOUND", CamundaClientCompat::cancel);
    check("publish: a message correlates to a waiting instance", CamundaClientCompat::publish);
    check("publish: a duplicate message id is ALREADY_EXISTS", CamundaClientCompat::publishDuplicate);
    check("correlate (REST only): to a waiting instance and a message start event; none is NOT_FOUND",
        CamundaClientCompat::correlate);
    check("signal: broadcast starts an instance and continues waiting ones", CamundaClientCompat::signal);
    check("decision: evaluate by id and by key, in a business rule task", CamundaClientCompat::evaluateDecision);
    check("decision: an unknown decision is NOT_FOUND", CamundaClientCompat::evaluateUnknown);
    check("errors: an unknown process, variables Zeebe cannot hold, an unknown job", CamundaClientCompat::errors);
    check("user task (REST only): assigned, claimed, unassigned, updated and completed", CamundaClientCompat::userTask);
    check(
        "variables: random doubles and large longs come back exactly (create, job, complete, result)",
        CamundaClientCompat::randomNumbers);
    check("clock (REST only): pinned, a timer fires and deadlines follow; reset", CamundaClientCompat::clock);
    check(
        "search (REST only): instances, jobs, variables, elements and definitions; gets by key, XML, pages",
        CamundaClientCompat::searches);
    check("search (REST only): the forms of a start event and a user task", CamundaClientCompat::forms);
  }

  // ---------------------------------------------------------------------------------------
  // Checks
  // ---------------------------------------------------------------------------------------

  private static void topology() {
    final Topology topology = join(client.newTopologyRequest().send());
    expectEquals("brokers", 1, topology.getBrokers().size());
    expectEquals("cluster size", 1, topology.getClusterSize());
    expectEquals("partitions count", partitions, topology.getPartitionsCount());
    expectEquals("replication factor", 1, topology.getReplicationFactor());
    expect(
        topology.getGatewayVersion() != null && !topology.getGatewayVersion().isEmpty(),
        "a gateway version, got '" + topology.getGatewayVersion() + "'");
    final BrokerInfo broker = topology.getBrokers().get(0);
    expect(broker.getPort() > 0, "a broker port, got " + broker.getPort());
    expect(broker.getHost() != null && !broker.getHost().isEmpty(), "a broker host");
    expectEquals("broker address", broker.getHost() + ":" + broker.getPort(), broker.getAddress());
    expectEquals("broker node id", 0, broker.getNodeId());
    expect(broker.getVersion() != null && !broker.getVersion().isEmpty(), "a broker version");
    final Set<Integer> seen = new TreeSet<>();
    for (final PartitionInfo partition : broker.getPartitions()) {
      seen.add(partition.getPartitionId());
      expect(partition.isLeader(), "partition " + partition.getPartitionId() + " is not leader");
      expectEquals("role of partition " + partition.getPartitionId(), PartitionBrokerRole.LEADER, partition.getRole());
      expectEquals(
          "health of partition " + partition.getPartitionId(), PartitionBrokerHealth.HEALTHY, partition.getHealth());
    }
    expectEquals("partition ids of the broker", allPartitions(), seen);
  }

  private static void status() {
    final StatusResponse status = join(client.newStatusRequest().send());
    expectEquals("status", StatusResponse.Status.UP, status.getStatus());
  }

  private static long sumKey;
  private static long discountKey;

  private static void deploy() {
    final Map<String, String> resources = new LinkedHashMap<>();
    for (final String task : TASKS) {
      resources.put(id(task) + ".bpmn", Bpmn.convertToString(serviceTaskProcess(id(task))));
    }
    for (final BpmnModelInstance model :
        List.of(
            sumProcess(), errorProcess(), variablesProcess(), signalStartProcess(), signalCatchProcess(),
            orderProcess(), messageStartProcess(), timerProcess(), echoProcess(), decisionProcess(),
            userTaskProcess())) {
      final String processId = model.getModelElementsByType(io.camunda.zeebe.model.bpmn.instance.Process.class)
          .iterator().next().getId();
      resources.put(processId + ".bpmn", Bpmn.convertToString(model));
    }
    resources.put(id("pricing") + ".dmn", discountDmn());

    final var command = client.newDeployResourceCommand();
    DeployResourceCommandStep2 step = null;
    for (final var resource : resources.entrySet()) {
      step =
          step == null
              ? command.addResourceStringUtf8(resource.getValue(), resource.getKey())
              : step.addResourceStringUtf8(resource.getValue(), resource.getKey());
    }
    final DeploymentEvent deployment = join(step.send());
    expect(deployment.getKey() > 0, "a deployment key, got " + deployment.getKey());
    expectEquals("tenant of the deployment", "<default>", deployment.getTenantId());
    final Map<String, Integer> versions = new TreeMap<>();
    for (final var process : deployment.getProcesses()) {
      versions.put(process.getBpmnProcessId(), process.getVersion());
      expectEquals(
          "resource name of " + process.getBpmnProcessId(),
          process.getBpmnProcessId() + ".bpmn",
          process.getResourceName());
      expect(process.getProcessDefinitionKey() > 0, "a process definition key");
      expectEquals("tenant of " + process.getBpmnProcessId(), "<default>", process.getTenantId());
      if (process.getBpmnProcessId().equals(id("sum"))) {
        sumKey = process.getProcessDefinitionKey();
      }
    }
    final Map<String, Integer> expected = new TreeMap<>();
    resources.keySet().stream()
        .filter(name -> name.endsWith(".bpmn"))
        .forEach(name -> expected.put(name.substring(0, name.length() - 5), 1));
    expectEquals("deployed processes and versions", expected, versions);

    expectEquals("decisions", 1, deployment.getDecisions().size());
    final var decision = deployment.getDecisions().get(0);
    expectEquals("decision id", id("discount"), decision.getDmnDecisionId());
    expectEquals("decision name", "Discount", decision.getDmnDecisionName());
    expectEquals("decision version", 1, decision.getVersion());
    expectEquals("decision's requirements id", id("pricing"), decision.getDmnDecisionRequirementsId());
    expectEquals("decision's tenant", "<default>", decision.getTenantId());
    discountKey = decision.getDecisionKey();
    expect(discountKey > 0, "a decision key");
    expectEquals("decision requirements", 1, deployment.getDecisionRequirements().size());
    final var drg = deployment.getDecisionRequirements().get(0);
    expectEquals("decision requirements id", id("pricing"), drg.getDmnDecisionRequirementsId());
    expectEquals("decision requirements name", "Pricing", drg.getDmnDecisionRequirementsName());
    expectEquals("decision requirements resource", id("pricing") + ".dmn", drg.getResourceName());
    expectEquals("decision requirements version", 1, drg.getVersion());
    expectEquals(
        "decision requirements key of the decision", drg.getDecisionRequirementsKey(), decision.getDecisionRequirementsKey());

    // The same resources again are recognized as unchanged.
    final DeploymentEvent again = join(step.send());
    for (final var process : again.getProcesses()) {
      expectEquals("version of unchanged " + process.getBpmnProcessId(), 1, process.getVersion());
    }
    expectEquals("key of the unchanged decision", discountKey, again.getDecisions().get(0).getDecisionKey());
  }

  private static void deployInvalid() {
    final String invalid =
        "<?xml version=\"1.0\"?><bpmn:definitions"
            + " xmlns:bpmn=\"http://www.omg.org/spec/BPMN/20100524/MODEL\" id=\"d\""
            + " targetNamespace=\"x\"><bpmn:process id=\"" + id("broken") + "\" isExecutable=\"true\">"
            + "<bpmn:startEvent id=\"s\"/><bpmn:sequenceFlow id=\"f\" sourceRef=\"s\""
            + " targetRef=\"nowhere\"/></bpmn:process></bpmn:definitions>";
    expectError(
        Refusal.of(400, "INVALID_ARGUMENT", Status.Code.INVALID_ARGUMENT, "targetRef"),
        () -> client.newDeployResourceCommand().addResourceStringUtf8(invalid, id("broken") + ".bpmn").send());
  }

  private static void create() {
    final ProcessInstanceEvent instance =
        join(
            client
                .newCreateInstanceCommand()
                .bpmnProcessId(id("cancel"))
                .latestVersion()
                .variables(Map.of("origin", "create"))
                .send());
    try {
      expect(instance.getProcessInstanceKey() > 0, "an instance key");
      expectEquals("bpmn process id", id("cancel"), instance.getBpmnProcessId());
      expectEquals("version", 1, instance.getVersion());
      expect(instance.getProcessDefinitionKey() > 0, "a process definition key");
      expectEquals("tenant", "<default>", instance.getTenantId());
    } finally {
      join(client.newCancelInstanceCommand(instance.getProcessInstanceKey()).send());
    }
    final ProcessInstanceEvent byKey =
        join(
            client
                .newCreateInstanceCommand()
                .processDefinitionKey(sumKey)
                .variables(Map.of("a", 1, "b", 1))
                .tags("compat", "by-key")
                .send());
    expectEquals("bpmn process id (by key)", id("sum"), byKey.getBpmnProcessId());
    expectEquals("process definition key (by key)", sumKey, byKey.getProcessDefinitionKey());
    expectEquals("version (by key)", 1, byKey.getVersion());
    expectEquals("tags", Set.of("compat", "by-key"), byKey.getTags());
  }

  private static void createWithResult() {
    final ProcessInstanceResult result =
        join(
            client
                .newCreateInstanceCommand()
                .bpmnProcessId(id("sum"))
                .version(1)
                .variables(Map.of("a", 40, "b", 2))
                .withResult()
                .send());
    expectEquals("bpmn process id", id("sum"), result.getBpmnProcessId());
    expectEquals("version", 1, result.getVersion());
    expectEquals("process definition key", sumKey, result.getProcessDefinitionKey());
    expectEquals("tenant", "<default>", result.getTenantId());
    expect(result.getProcessInstanceKey() > 0, "an instance key");
    expectNumber("sum", 42, result.getVariablesAsMap().get("sum"));
    expectNumber("a", 40, result.getVariablesAsMap().get("a"));

    final ProcessInstanceResult fetched =
        join(
            client
                .newCreateInstanceCommand()
                .bpmnProcessId(id("sum"))
                .latestVersion()
                .variables(Map.of("a", 1, "b", 2))
                .withResult()
                .fetchVariables("sum", "b")
                .send());
    expectEquals("fetched variable names", Set.of("sum", "b"), fetched.getVariablesAsMap().keySet());
    expectNumber("sum", 3, fetched.getVariable("sum"));
  }

  private static void createTimesOut() {
    // The instance waits for a job nobody takes: the result cannot come within a second.
    expectError(
        Refusal.of(504, "DEADLINE_EXCEEDED", Status.Code.DEADLINE_EXCEEDED, null),
        () ->
            client
                .newCreateInstanceCommand()
                .bpmnProcessId(id("update"))
                .latestVersion()
                .withResult()
                .requestTimeout(Duration.ofSeconds(1))
                .send());
    // The instance was created all the same: its job is there.
    final ActivatedJob job = activateOne(id("update"), Duration.ofSeconds(10));
    join(client.newCompleteCommand(job).send());
  }

  private static void pollingWorker() {
    final Map<Long, String> workers = new ConcurrentHashMap<>();
    final JobWorker worker =
        client
            .newWorker()
            .jobType(id("poll"))
            .handler(
                (jobClient, job) -> {
                  workers.put(job.getKey(), job.getWorker());
                  final Number n = (Number) job.getVariablesAsMap().get("n");
                  jobClient
                      .newCompleteCommand(job)
                      .variables(Map.of("doubled", n.intValue() * 2, "by", job.getWorker()))
                      .send()
                      .join();
                })
            .name(id("poller"))
            .timeout(Duration.ofMinutes(1))
            .pollInterval(Duration.ofMillis(100))
            .requestTimeout(Duration.ofSeconds(5))
            .open();
    try {
      final List<CamundaFuture<ProcessInstanceResult>> results = new ArrayList<>();
      for (int n = 1; n <= 4; n++) {
        results.add(
            client
                .newCreateInstanceCommand()
                .bpmnProcessId(id("poll"))
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
        expectEquals("worker name seen by the handler", id("poller"), result.getVariablesAsMap().get("by"));
        seen.add(partitionOf(result.getProcessInstanceKey()));
      }
      expectEquals("partitions of the worked instances", allPartitions(), seen);
      expectEquals("jobs handled", 4, workers.size());
    } finally {
      worker.close();
    }
  }

  private static void completeTwice() {
    final long instance = createOne(id("twice"), Map.of("input", "x"));
    final ActivatedJob job = activateOne(id("twice"), Duration.ofSeconds(10));
    expectEquals("instance of the job", instance, job.getProcessInstanceKey());
    expectEquals("job type", id("twice"), job.getType());
    expectEquals("retries", 3, job.getRetries());
    expectEquals("element id", "work", job.getElementId());
    expect(job.getElementInstanceKey() > 0, "an element instance key");
    expectEquals("bpmn process id", id("twice"), job.getBpmnProcessId());
    expectEquals("process definition version", 1, job.getProcessDefinitionVersion());
    expect(job.getProcessDefinitionKey() > 0, "a process definition key on the job");
    expectEquals("partition of the job", partitionOf(instance), partitionOf(job.getKey()));
    expectEquals("custom headers", Map.of("owner", "camunda-client"), job.getCustomHeaders());
    expectEquals("worker", "camunda-client-compat", job.getWorker());
    expectEquals("tenant", "<default>", job.getTenantId());
    expectEquals("variables", Map.of("input", "x"), job.getVariablesAsMap());
    expectEquals("kind", io.camunda.client.api.search.enums.JobKind.BPMN_ELEMENT, job.getKind());
    expectEquals(
        "listener event type", io.camunda.client.api.search.enums.ListenerEventType.UNSPECIFIED,
        job.getListenerEventType());
    expectEquals("user task properties of a service task's job", null, job.getUserTask());
    final long untilDeadline = job.getDeadline() - System.currentTimeMillis();
    expect(
        untilDeadline > 50_000 && untilDeadline <= 61_000,
        "deadline about a minute ahead (the activation's timeout), got " + untilDeadline + " ms");

    join(client.newCompleteCommand(job).variables(Map.of("done", true)).send());
    expectError(
        Refusal.of(404, "NOT_FOUND", Status.Code.NOT_FOUND, String.valueOf(job.getKey()))
            .at("/v2/jobs/" + job.getKey() + "/completion"),
        () -> client.newCompleteCommand(job).send());
  }

  private static void failWithBackoff() {
    final long instance = createOne(id("fail"), Map.of());
    ActivatedJob job = activateOne(id("fail"), Duration.ofSeconds(10));
    expectEquals("instance of the job", instance, job.getProcessInstanceKey());
    expectEquals("initial retries", 3, job.getRetries());

    final long failedAt = System.nanoTime();
    join(
        client
            .newFailCommand(job)
            .retries(2)
            .retryBackoff(Duration.ofSeconds(2))
            .errorMessage("transient trouble")
            .send());
    expectNone(id("fail"), Duration.ofMillis(500), "during the 2 s back-off");
    job = activateOne(id("fail"), Duration.ofSeconds(10));
    final long waitedMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - failedAt);
    expect(waitedMs >= 1800, "the job came back after " + waitedMs + " ms, before its 2 s back-off");
    expectEquals("retries after the failure", 2, job.getRetries());

    // Without a back-off the job can be activated at once; the failure's variables are set.
    join(client.newFailCommand(job.getKey()).retries(1).errorMessage("again").variables(Map.of("tried", 2)).send());
    job = activateOne(id("fail"), Duration.ofSeconds(5));
    expectEquals("retries after the second failure", 1, job.getRetries());
    expectNumber("variable set by the failure", 2, job.getVariablesAsMap().get("tried"));
    join(client.newCompleteCommand(job).send());
  }

  private static void incident() {
    final long instance = createOne(id("incident"), Map.of());
    ActivatedJob job = activateOne(id("incident"), Duration.ofSeconds(10));
    expectEquals("instance of the job", instance, job.getProcessInstanceKey());
    join(client.newFailCommand(job).retries(0).errorMessage("permanent trouble").send());
    expectNone(id("incident"), Duration.ofMillis(500), "after failing with 0 retries");

    join(client.newUpdateRetriesCommand(job.getKey()).retries(2).send());
    // The job stays failed (its incident is open) until the incident is resolved.
    expectNone(id("incident"), Duration.ofMillis(500), "after updating retries but before resolving");

    final long incidentKey = resolveIncidentOf(job);

    job = activateOne(id("incident"), Duration.ofSeconds(10));
    expectEquals("instance of the reactivated job", instance, job.getProcessInstanceKey());
    expectEquals("retries of the reactivated job", 2, job.getRetries());
    join(client.newCompleteCommand(job).send());

    // A resolved incident is gone.
    expectError(
        Refusal.of(404, "NOT_FOUND", Status.Code.NOT_FOUND, String.valueOf(incidentKey))
            .at("/v2/incidents/" + incidentKey + "/resolution"),
        () -> client.newResolveIncidentCommand(incidentKey).send());
  }

  /**
   * Resolves the incident of a job that failed without retries, found as a user finds it:
   * through the incident search of the REST API; returns its key. Where Beeline does not serve
   * that search yet, the suite says so ("skip") and finds the incident as the gRPC-only suite
   * does: keys on a partition are a counter, and the incident is created on the job's partition
   * right after the job's failure, so it is among the keys after the job's; resolving the others
   * answers NOT_FOUND.
   */
  private static long resolveIncidentOf(final ActivatedJob job) {
    final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    try {
      while (true) {
        final List<Incident> incidents =
            join(
                    client
                        .newIncidentSearchRequest()
                        .filter(f -> f.processInstanceKey(job.getProcessInstanceKey()))
                        .send())
                .items();
        if (!incidents.isEmpty()) {
          expectEquals("incidents of the instance", 1, incidents.size());
          final Incident incident = incidents.get(0);
          expectEquals("job of the incident", job.getKey(), incident.getJobKey());
          expectEquals("element of the incident", "work", incident.getElementId());
          expectEquals("error message of the incident", "permanent trouble", incident.getErrorMessage());
          join(client.newResolveIncidentCommand(incident.getIncidentKey()).send());
          return incident.getIncidentKey();
        }
        expect(System.nanoTime() < deadline, "the incident search found nothing within 10 s");
        sleep(200);
      }
    } catch (final ProblemException e) {
      if (e.code() != 501) {
        throw e;
      }
      skip(
          "incident search (POST /v2/incidents/search)",
          "Beeline answers 501 (" + e.details().getDetail() + "); the incident is found by resolving the keys"
              + " after the job's");
    }
    for (long candidate = job.getKey() + 1; candidate <= job.getKey() + 200; candidate++) {
      final long key = candidate;
      final Throwable error = failure(() -> client.newResolveIncidentCommand(key).send());
      if (error == null) {
        return key;
      }
      expectRefusal(Refusal.of(404, "NOT_FOUND", Status.Code.NOT_FOUND, null), error, "resolving key " + key);
    }
    throw new AssertionError("no incident among the 200 keys after the job's key " + job.getKey());
  }

  private static void throwError() {
    final CamundaFuture<ProcessInstanceResult> result =
        client
            .newCreateInstanceCommand()
            .bpmnProcessId(id("error"))
            .latestVersion()
            .withResult()
            .requestTimeout(Duration.ofSeconds(JOIN_SECONDS))
            .send();
    final ActivatedJob job = activateOne(id("risky"), Duration.ofSeconds(10));
    join(
        client
            .newThrowErrorCommand(job)
            .errorCode("NOT_AVAILABLE")
            .errorMessage("out of stock")
            .variables(Map.of("reason", "stock"))
            .send());
    final Map<String, Object> variables = join(result).getVariablesAsMap();
    expectEquals("path taken", "caught", variables.get("path"));
    expectEquals("variable thrown with the error", "stock", variables.get("reason"));
    expectError(
        Refusal.of(404, "NOT_FOUND", Status.Code.NOT_FOUND, String.valueOf(job.getKey())),
        () -> client.newThrowErrorCommand(job).errorCode("NOT_AVAILABLE").send());
  }

  private static void updateJob() {
    final long instance = createOne(id("update"), Map.of());
    ActivatedJob job = activateFor(id("update"), Duration.ofMinutes(10));
    expectEquals("instance of the job", instance, job.getProcessInstanceKey());
    expectEquals("initial retries", 3, job.getRetries());
    // New retries, then a one-second timeout: the job comes back with them.
    join(client.newUpdateRetriesCommand(job).retries(5).send());
    join(client.newUpdateTimeoutCommand(job).timeout(Duration.ofSeconds(1)).send());
    job = activateFor(id("update"), Duration.ofMinutes(10));
    expectEquals("retries after updating them to 5 and timing out", 5, job.getRetries());

    // Both at once (PATCH /v2/jobs/{key}; the client has it over REST only).
    join(client.newUpdateJobCommand(job).update(7, 1000L).send());
    job = activateFor(id("update"), Duration.ofMinutes(1));
    expectEquals("retries after updating retries and timeout at once", 7, job.getRetries());
    join(client.newCompleteCommand(job).send());

    final long unknown = (1L << KEY_BITS) + 999_999_998L;
    expectError(
        Refusal.of(404, "NOT_FOUND", Status.Code.NOT_FOUND, String.valueOf(unknown)),
        () -> client.newUpdateRetriesCommand(unknown).retries(1).send());
  }

  /** One job of this type, activated with this timeout, waiting up to 15 s for it. */
  private static ActivatedJob activateFor(final String type, final Duration timeout) {
    final List<ActivatedJob> jobs =
        join(
                client
                    .newActivateJobsCommand()
                    .jobType(type)
                    .maxJobsToActivate(1)
                    .timeout(timeout)
                    .requestTimeout(Duration.ofSeconds(15))
                    .send())
            .getJobs();
    expect(jobs.size() == 1, "expected one job of type " + type + " within 15 s, got " + jobs.size());
    return jobs.get(0);
  }

  private static void updateTimeout() {
    final long instance = createOne(id("timeout"), Map.of());
    ActivatedJob job = activateFor(id("timeout"), Duration.ofMinutes(10));
    expectEquals("instance of the job", instance, job.getProcessInstanceKey());
    final long firstDeadline = job.getDeadline();
    expectNone(id("timeout"), Duration.ofMillis(500), "while activated with a 10 minute timeout");
    join(client.newUpdateTimeoutCommand(job).timeout(Duration.ofSeconds(1)).send());
    final long updatedAt = System.nanoTime();
    job = activateOne(id("timeout"), Duration.ofSeconds(15));
    final long waitedMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - updatedAt);
    expectEquals("instance of the timed-out job", instance, job.getProcessInstanceKey());
    expect(waitedMs >= 800, "the job came back after " + waitedMs + " ms, before its new 1 s timeout");
    expect(job.getDeadline() != firstDeadline, "a new deadline on reactivation");
    join(client.newCompleteCommand(job).send());
  }

  private static void setVariables() {
    final CamundaFuture<ProcessInstanceResult> result =
        client
            .newCreateInstanceCommand()
            .bpmnProcessId(id("vars"))
            .latestVersion()
            .variables(Map.of("existing", 0))
            .withResult()
            .requestTimeout(Duration.ofSeconds(JOIN_SECONDS))
            .send();
    ActivatedJob job = activateOne(id("vars"), Duration.ofSeconds(10));
    final long instance = job.getProcessInstanceKey();

    join(client.newSetVariablesCommand(instance).variables(Map.of("global", "g")).send());
    // Local: only on the task's own scope, gone when the task completes.
    join(client.newSetVariablesCommand(job.getElementInstanceKey()).variables(Map.of("local", "l")).local(true).send());
    // Not local: an existing variable is updated where it lives, a new one created at the top.
    join(
        client
            .newSetVariablesCommand(job.getElementInstanceKey())
            .variables(Map.of("existing", 1, "propagated", "p"))
            .local(false)
            .send());

    // Fail without back-off to see the variables on a fresh activation.
    join(client.newFailCommand(job).retries(1).send());
    job = activateOne(id("vars"), Duration.ofSeconds(10));
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

    expectError(
        Refusal.of(404, "NOT_FOUND", Status.Code.NOT_FOUND, String.valueOf(instance))
            .at("/v2/element-instances/" + instance + "/variables"),
        () -> client.newSetVariablesCommand(instance).variables(Map.of("late", 1)).send());
  }

  /**
   * What Operate or Camunda Process Test asks of the read side, through the client's search and
   * get requests (always REST): found once exported (eventually consistent), filtered, sorted
   * and paged by cursor, and a key that is not there is NOT_FOUND.
   */
  private static void searches() {
    final String processId = id("search");
    final List<Long> created = new ArrayList<>();
    for (int n = 0; n < 3; n++) {
      created.add(createOne(processId, Map.of("n", n)));
    }
    created.sort(java.util.Comparator.reverseOrder());
    final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    List<io.camunda.client.api.search.response.ProcessInstance> instances;
    while (true) {
      instances =
          join(client
                  .newProcessInstanceSearchRequest()
                  .filter(f -> f.processDefinitionId(processId))
                  .sort(s -> s.processInstanceKey().desc())
                  .send())
              .items();
      final List<io.camunda.client.api.search.response.Job> jobs =
          join(client.newJobSearchRequest().filter(f -> f.type(processId)).send()).items();
      if (instances.size() == 3 && jobs.size() == 3) {
        break;
      }
      expect(System.nanoTime() < deadline, "3 instances and their jobs not found within 10 s: " + instances.size());
      sleep(100);
    }
    final List<Long> keys = new ArrayList<>();
    for (final var instance : instances) {
      keys.add(instance.getProcessInstanceKey());
      expectEquals("state of an instance", io.camunda.client.api.search.enums.ProcessInstanceState.ACTIVE,
          instance.getState());
      expectEquals("process of an instance", processId, instance.getProcessDefinitionId());
      expect(instance.getStartDate() != null, "a start date");
    }
    expectEquals("instances, newest key first", created, keys);

    // Pages: two, then the rest after the end cursor.
    final var first =
        join(client
            .newProcessInstanceSearchRequest()
            .filter(f -> f.processDefinitionId(processId))
            .sort(s -> s.processInstanceKey().desc())
            .page(p -> p.limit(2))
            .send());
    expectEquals("first page", created.subList(0, 2),
        first.items().stream().map(i -> i.getProcessInstanceKey()).toList());
    expectEquals("total items", 3L, first.page().totalItems());
    final String end = first.page().endCursor();
    final var second =
        join(client
            .newProcessInstanceSearchRequest()
            .filter(f -> f.processDefinitionId(processId))
            .sort(s -> s.processInstanceKey().desc())
            .page(p -> p.after(end).limit(2))
            .send());
    expectEquals("page after the end cursor", created.subList(2, 3),
        second.items().stream().map(i -> i.getProcessInstanceKey()).toList());

    // A variable's value, and filters on it.
    final long one =
        join(client.newProcessInstanceSearchRequest()
                .filter(f -> f.processDefinitionId(processId).variables(Map.of("n", 1)))
                .send())
            .items().stream().map(i -> i.getProcessInstanceKey()).findFirst()
            .orElseThrow(() -> new AssertionError("no instance with n = 1"));
    final var variables =
        join(client.newVariableSearchRequest().filter(f -> f.processInstanceKey(one)).send()).items();
    expectEquals("variables of the instance", 1, variables.size());
    expectEquals("name of the variable", "n", variables.get(0).getName());
    expectEquals("value of the variable (JSON)", "1", variables.get(0).getValue());
    final var variable = join(client.newVariableGetRequest(variables.get(0).getVariableKey()).send());
    expectEquals("variable by key", "1", variable.getValue());

    // Gets by key: the instance, its elements, its jobs, its definition and XML.
    final var instance = join(client.newProcessInstanceGetRequest(one).send());
    expectEquals("instance by key", one, instance.getProcessInstanceKey());
    final var elements =
        join(client.newElementInstanceSearchRequest().filter(f -> f.processInstanceKey(one)).send()).items();
    final Set<String> elementIds = new TreeSet<>();
    elements.forEach(e -> elementIds.add(e.getElementId()));
    expect(elementIds.containsAll(List.of(processId, "start", "work")), "elements of the instance: " + elementIds);
    final var jobs =
        join(client.newJobSearchRequest().filter(f -> f.processInstanceKey(one)).send()).items();
    expectEquals("jobs of the instance", 1, jobs.size());
    expectEquals("state of the job", io.camunda.client.api.search.enums.JobState.CREATED, jobs.get(0).getState());
    expectEquals("element of the job", "work", jobs.get(0).getElementId());
    final var definitions =
        join(client.newProcessDefinitionSearchRequest().filter(f -> f.processDefinitionId(processId)).send())
            .items();
    expectEquals("definitions of the process", 1, definitions.size());
    final long definition = definitions.get(0).getProcessDefinitionKey();
    expectEquals("definition of the instance", definition, instance.getProcessDefinitionKey());
    final String xml = join(client.newProcessDefinitionGetXmlRequest(definition).send());
    expect(xml.contains("id=\"" + processId + "\""), "the definition's XML names its process");
    expectEquals("definition by key", processId,
        join(client.newProcessDefinitionGetRequest(definition).send()).getProcessDefinitionId());

    // A key that is not there.
    expectRestError(
        Refusal.of(404, "NOT_FOUND", null, null).at("/v2/process-instances/" + (one + 1_000_000)),
        () -> client.newProcessInstanceGetRequest(one + 1_000_000).send());
    for (final ActivatedJob job : activate(processId, 3, Duration.ofSeconds(10))) {
      join(client.newCompleteCommand(job).send());
    }
  }

  /**
   * A deployed form linked by a process's start event and its user task: what a task list
   * renders, read through the client's form requests.
   */
  private static void forms() {
    final String formId = id("order-form");
    final String processId = id("order-with-form");
    final String schema =
        "{\"id\":\"" + formId + "\",\"type\":\"default\",\"components\":"
            + "[{\"type\":\"textfield\",\"key\":\"item\",\"label\":\"Item\"}]}";
    final BpmnModelInstance model =
        Bpmn.createExecutableProcess(processId)
            .startEvent("start")
            .zeebeFormId(formId)
            .userTask("fill", t -> t.zeebeUserTask().zeebeFormId(formId))
            .endEvent()
            .done();
    final DeploymentEvent deployment =
        join(client
            .newDeployResourceCommand()
            .addResourceStringUtf8(schema, formId + ".form")
            .addResourceStringUtf8(Bpmn.convertToString(model), processId + ".bpmn")
            .send());
    expectEquals("forms deployed", 1, deployment.getForm().size());
    final long formKey = deployment.getForm().get(0).getFormKey();
    final long definition = deployment.getProcesses().get(0).getProcessDefinitionKey();
    final long instance = createOne(processId, Map.of());
    final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    long task;
    while (true) {
      final var tasks =
          join(client.newUserTaskSearchRequest().filter(f -> f.processInstanceKey(instance)).send()).items();
      if (!tasks.isEmpty()) {
        task = tasks.get(0).getUserTaskKey();
        expectEquals("form key of the task", formKey, tasks.get(0).getFormKey());
        break;
      }
      expect(System.nanoTime() < deadline, "the user task not found within 10 s");
      sleep(100);
    }
    final var definitions =
        join(client.newProcessDefinitionSearchRequest().filter(f -> f.processDefinitionId(processId)).send())
            .items();
    expectEquals("the definition has a start form", true, definitions.get(0).getHasStartForm());
    for (final var form :
        List.of(
            join(client.newUserTaskGetFormRequest(task).send()),
            join(client.newProcessDefinitionGetFormRequest(definition).send()))) {
      expectEquals("form id", formId, form.getFormId());
      expectEquals("form key", formKey, form.getFormKey());
      expectEquals("form version", 1L, form.getVersion());
      expectEquals("form tenant", "<default>", form.getTenantId());
      expect(String.valueOf(form.getSchema()).contains("textfield"), "the form's schema: " + form.getSchema());
    }
    expectRestError(
        Refusal.of(404, "NOT_FOUND", null, null).at("/v2/user-tasks/" + (task + 1_000_000) + "/form"),
        () -> client.newUserTaskGetFormRequest(task + 1_000_000).send());
    join(client.newCompleteUserTaskCommand(task).send());
  }

  private static void cancel() {
    final long instance = createOne(id("cancel"), Map.of());
    final ActivatedJob job = activateOne(id("cancel"), Duration.ofSeconds(10));
    expectEquals("instance of the job", instance, job.getProcessInstanceKey());
    join(client.newCancelInstanceCommand(instance).send());
    expectError(Refusal.of(404, "NOT_FOUND", Status.Code.NOT_FOUND, null), () -> client.newCompleteCommand(job).send());
    expectError(
        Refusal.of(404, "NOT_FOUND", Status.Code.NOT_FOUND, String.valueOf(instance))
            .at("/v2/process-instances/" + instance + "/cancellation"),
        () -> client.newCancelInstanceCommand(instance).send());
  }

  private static void publish() throws InterruptedException {
    final List<CamundaFuture<ProcessInstanceResult>> results = new ArrayList<>();
    final int count = 2 * partitions;
    for (int i = 0; i < count; i++) {
      results.add(
          client
              .newCreateInstanceCommand()
              .bpmnProcessId(id("order"))
              .latestVersion()
              .variables(Map.of("orderId", id("order-" + i)))
              .withResult()
              .requestTimeout(Duration.ofSeconds(JOIN_SECONDS))
              .send());
    }
    final Set<Integer> messagePartitions = new TreeSet<>();
    for (int i = 0; i < count; i++) {
      final PublishMessageResponse published =
          join(
              client
                  .newPublishMessageCommand()
                  .messageName(id("payment"))
                  .correlationKey(id("order-" + i))
                  .timeToLive(Duration.ofMinutes(1))
                  .variables(Map.of("paid", 10 * i))
                  .send());
      expect(published.getMessageKey() > 0, "a message key");
      expectEquals("tenant of the message", "<default>", published.getTenantId());
      messagePartitions.add(partitionOf(published.getMessageKey()));
    }
    for (int i = 0; i < count; i++) {
      expectNumber("order-" + i + " paid", 10 * i, join(results.get(i)).getVariablesAsMap().get("paid"));
    }
    expect(messagePartitions.size() > 1 || partitions == 1, "the messages all went to one partition: " + messagePartitions);
  }

  private static void publishDuplicate() {
    final PublishMessageResponse first =
        join(
            client
                .newPublishMessageCommand()
                .messageName(id("duplicate"))
                .correlationKey("dup-1")
                .messageId(id("msg-1"))
                .timeToLive(Duration.ofMinutes(1))
                .send());
    expect(first.getMessageKey() > 0, "a message key");
    expectError(
        Refusal.of(409, "ALREADY_EXISTS", Status.Code.ALREADY_EXISTS, id("msg-1")),
        () ->
            client
                .newPublishMessageCommand()
                .messageName(id("duplicate"))
                .correlationKey("dup-1")
                .messageId(id("msg-1"))
                .timeToLive(Duration.ofMinutes(1))
                .send());
  }

  private static void correlate() {
    // A waiting instance takes the message at once, and the answer names it.
    final CamundaFuture<ProcessInstanceResult> waiting =
        client
            .newCreateInstanceCommand()
            .bpmnProcessId(id("order"))
            .latestVersion()
            .variables(Map.of("orderId", id("correlated")))
            .withResult()
            .requestTimeout(Duration.ofSeconds(JOIN_SECONDS))
            .send();
    CorrelateMessageResponse correlated = null;
    final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (correlated == null) {
      // Until the instance's subscription is open, nothing takes the message: NOT_FOUND.
      try {
        correlated =
            join(
                client
                    .newCorrelateMessageCommand()
                    .messageName(id("payment"))
                    .correlationKey(id("correlated"))
                    .variables(Map.of("paid", 77))
                    .send());
      } catch (final ProblemException e) {
        if (e.code() != 404 || System.nanoTime() > deadline) {
          throw e;
        }
        sleep(100);
      }
    }
    final ProcessInstanceResult result = join(waiting);
    expectEquals("instance the message correlated to", result.getProcessInstanceKey(), correlated.getProcessInstanceKey());
    expect(correlated.getMessageKey() > 0, "a message key");
    expectEquals("tenant", "<default>", correlated.getTenantId());
    expectNumber("paid", 77, result.getVariablesAsMap().get("paid"));

    // A message start event: the answer names the instance it started.
    final CorrelateMessageResponse started =
        join(
            client
                .newCorrelateMessageCommand()
                .messageName(id("start-order"))
                .withoutCorrelationKey()
                .variables(Map.of("item", "book"))
                .send());
    final ActivatedJob job = activateOne(id("message-started"), Duration.ofSeconds(10));
    expectEquals("instance started by the message", job.getProcessInstanceKey(), started.getProcessInstanceKey());
    expectEquals("message variable in the started instance", "book", job.getVariablesAsMap().get("item"));
    join(client.newCompleteCommand(job).send());

    // Nobody waits: nothing is buffered, and the user hears so.
    expectRestError(
        Refusal.of(404, "NOT_FOUND", null, id("nobody-waits")).at("/v2/messages/correlation"),
        () -> client.newCorrelateMessageCommand().messageName(id("nobody-waits")).correlationKey("k").send());
  }

  private static void signal() {
    final Set<Long> waiting = new HashSet<>();
    final List<CamundaFuture<ProcessInstanceResult>> results = new ArrayList<>();
    for (int i = 0; i < 2 * partitions; i++) {
      results.add(
          client
              .newCreateInstanceCommand()
              .bpmnProcessId(id("signal-catch"))
              .latestVersion()
              .variables(Map.of("waiter", i))
              .withResult()
              .requestTimeout(Duration.ofSeconds(JOIN_SECONDS))
              .send());
    }
    // Let the instances reach their catch events (a signal is not buffered).
    sleep(500);
    final var response =
        join(client.newBroadcastSignalCommand().signalName(id("go")).variables(Map.of("go", 7)).send());
    expect(response.getKey() > 0, "a signal key");
    expectEquals("tenant", "<default>", response.getTenantId());
    final Set<Integer> continuedPartitions = new TreeSet<>();
    for (final var result : results) {
      final ProcessInstanceResult done = join(result);
      expectNumber("signal variable in a continued instance", 7, done.getVariablesAsMap().get("go"));
      waiting.add(done.getProcessInstanceKey());
      continuedPartitions.add(partitionOf(done.getProcessInstanceKey()));
    }
    expectEquals("instances continued by the signal", 2 * partitions, waiting.size());
    expectEquals("partitions of the continued instances", allPartitions(), continuedPartitions);

    final ActivatedJob started = activateOne(id("signal-started"), Duration.ofSeconds(10));
    expectEquals("process started by the signal", id("signal-start"), started.getBpmnProcessId());
    expectNumber("signal variable in the started instance", 7, started.getVariablesAsMap().get("go"));
    join(client.newCompleteCommand(started).send());
    expectNone(id("signal-started"), Duration.ofMillis(300), "a second instance started by one signal");
  }

  private static void evaluateDecision() {
    final EvaluateDecisionResponse response =
        join(
            client
                .newEvaluateDecisionCommand()
                .decisionId(id("discount"))
                .variables(Map.of("customer", "gold"))
                .send());
    expectEquals("decision id", id("discount"), response.getDecisionId());
    expectEquals("decision key", discountKey, response.getDecisionKey());
    expectEquals("decision version", 1, response.getDecisionVersion());
    expectEquals("decision name", "Discount", response.getDecisionName());
    expectEquals("decision requirements id", id("pricing"), response.getDecisionRequirementsId());
    expect(response.getDecisionRequirementsKey() > 0, "a decision requirements key");
    expectEquals("decision output", "0.2", response.getDecisionOutput());
    expectEquals("tenant", "<default>", response.getTenantId());
    expect(
        response.getFailureMessage() == null || response.getFailureMessage().isEmpty(),
        "no failure message, got '" + response.getFailureMessage() + "'");
    expect(
        response.getFailedDecisionId() == null || response.getFailedDecisionId().isEmpty(),
        "no failed decision, got '" + response.getFailedDecisionId() + "'");
    expect(response.getDecisionInstanceKey() > 0, "a decision instance key");
    expectEquals("decision evaluation key", response.getDecisionInstanceKey(), response.getDecisionEvaluationKey());
    expectEquals("evaluated decisions", 1, response.getEvaluatedDecisions().size());
    final var evaluated = response.getEvaluatedDecisions().get(0);
    expectEquals("evaluated decision id", id("discount"), evaluated.getDecisionId());
    expectEquals("evaluated decision key", discountKey, evaluated.getDecisionKey());
    expectEquals("evaluated decision type", "DECISION_TABLE", evaluated.getDecisionType());
    expectEquals("evaluated decision output", "0.2", evaluated.getDecisionOutput());
    expectEquals("evaluated decision version", 1, evaluated.getDecisionVersion());
    expectEquals("evaluated decision name", "Discount", evaluated.getDecisionName());
    expectEquals("evaluated decision tenant", "<default>", evaluated.getTenantId());
    expectEquals(
        "evaluation instance key of the decision", response.getDecisionEvaluationKey() + "-1",
        evaluated.getDecisionEvaluationInstanceKey());
    expectEquals("evaluated inputs", 1, evaluated.getEvaluatedInputs().size());
    expectEquals("input id", "customer-input", evaluated.getEvaluatedInputs().get(0).getInputId());
    expectEquals("input name", "Customer", evaluated.getEvaluatedInputs().get(0).getInputName());
    expectEquals("input value", "\"gold\"", evaluated.getEvaluatedInputs().get(0).getInputValue());
    expectEquals("matched rules", 1, evaluated.getMatchedRules().size());
    final var rule = evaluated.getMatchedRules().get(0);
    expectEquals("matched rule", "gold", rule.getRuleId());
    expectEquals("rule index", 1, rule.getRuleIndex());
    expectEquals("output id", "discount-output", rule.getEvaluatedOutputs().get(0).getOutputId());
    expectEquals("output name", "discount", rule.getEvaluatedOutputs().get(0).getOutputName());
    expectEquals("output value", "0.2", rule.getEvaluatedOutputs().get(0).getOutputValue());

    final EvaluateDecisionResponse byKey =
        join(
            client
                .newEvaluateDecisionCommand()
                .decisionKey(discountKey)
                .variables(Map.of("customer", "nobody"))
                .send());
    expectEquals("decision id (by key)", id("discount"), byKey.getDecisionId());
    expectEquals("decision output (by key)", "0", byKey.getDecisionOutput());
    expectEquals(
        "matched rule (by key)", "anyone", byKey.getEvaluatedDecisions().get(0).getMatchedRules().get(0).getRuleId());

    final ProcessInstanceResult result =
        join(
            client
                .newCreateInstanceCommand()
                .bpmnProcessId(id("rule"))
                .latestVersion()
                .variables(Map.of("customer", "silver"))
                .withResult()
                .send());
    expectNumber("discount from the business rule task", 0.1, result.getVariablesAsMap().get("discount"));
  }

  private static void evaluateUnknown() {
    expectError(
        Refusal.of(404, "NOT_FOUND", Status.Code.NOT_FOUND, id("no-such-decision"))
            .at("/v2/decision-definitions/evaluation"),
        () -> client.newEvaluateDecisionCommand().decisionId(id("no-such-decision")).send());
  }

  private static void errors() {
    expectError(
        Refusal.of(404, "NOT_FOUND", Status.Code.NOT_FOUND, id("no-such-process")).at("/v2/process-instances"),
        () -> client.newCreateInstanceCommand().bpmnProcessId(id("no-such-process")).latestVersion().send());
    // An integer no 64 bits hold (Zeebe keeps variables as MessagePack): refused, naming it.
    expectError(
        Refusal.of(400, "INVALID_ARGUMENT", Status.Code.INVALID_ARGUMENT, "huge"),
        () ->
            client
                .newCreateInstanceCommand()
                .bpmnProcessId(id("echo"))
                .latestVersion()
                .variables(Map.of("huge", java.math.BigInteger.TWO.pow(70)))
                .send());
    if (transport == Transport.GRPC) {
      // Over REST the client itself refuses variables that are not a JSON object.
      expectError(
          Refusal.of(400, "INVALID_ARGUMENT", Status.Code.INVALID_ARGUMENT, "variables"),
          () ->
              client
                  .newCreateInstanceCommand()
                  .bpmnProcessId(id("echo"))
                  .latestVersion()
                  .variables("[1, 2, 3]")
                  .send());
    }
    final long neverUsed = (1L << KEY_BITS) + 999_999_999L;
    expectError(
        Refusal.of(404, "NOT_FOUND", Status.Code.NOT_FOUND, String.valueOf(neverUsed))
            .at("/v2/jobs/" + neverUsed + "/completion"),
        () -> client.newCompleteCommand(neverUsed).send());
    expectError(
        Refusal.of(404, "NOT_FOUND", Status.Code.NOT_FOUND, String.valueOf(neverUsed))
            .at("/v2/jobs/" + neverUsed + "/failure"),
        () -> client.newFailCommand(neverUsed).retries(1).send());
    // The node serves on.
    join(client.newTopologyRequest().send());
  }

  private static void userTask() {
    final long instance = createOne(id("approval"), Map.of("amount", 120));
    final long task = assignUserTaskOf(instance, "ann");
    final String path = "/v2/user-tasks/" + task;
    // Taken from ann only with allowOverride.
    expectRestError(
        Refusal.of(409, "INVALID_STATE", null, String.valueOf(task)).at(path + "/assignment"),
        () -> client.newAssignUserTaskCommand(task).assignee("bo").allowOverride(false).send());
    join(client.newAssignUserTaskCommand(task).assignee("bo").allowOverride(true).send());
    join(client.newUnassignUserTaskCommand(task).send());
    join(
        client
            .newUpdateUserTaskCommand(task)
            .candidateGroups("ops")
            .priority(80)
            .dueDate("2030-01-31T17:00:00Z")
            .send());
    join(client.newCompleteUserTaskCommand(task).variables(Map.of("approved", true)).send());
    final ActivatedJob job = activateOne(id("reviewed"), Duration.ofSeconds(10));
    expectEquals("instance after the task", instance, job.getProcessInstanceKey());
    expectEquals("the task's result", true, job.getVariablesAsMap().get("approved"));
    expectNumber("amount", 120, job.getVariablesAsMap().get("amount"));
    join(client.newCompleteCommand(job).send());
    expectRestError(
        Refusal.of(404, "NOT_FOUND", null, String.valueOf(task)).at(path + "/completion"),
        () -> client.newCompleteUserTaskCommand(task).send());
  }

  /**
   * Assigns the user task of an instance to {@code assignee} and returns its key, found as a
   * task list finds it: through the user task search. Where Beeline does not serve that search
   * yet, the suite says so ("skip") and finds it by assigning the keys after the instance's
   * (the task is created on the instance's partition right after it; other keys answer
   * NOT_FOUND).
   */
  private static long assignUserTaskOf(final long instance, final String assignee) {
    final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    try {
      while (true) {
        final var tasks =
            join(client.newUserTaskSearchRequest().filter(f -> f.processInstanceKey(instance)).send()).items();
        if (!tasks.isEmpty()) {
          expectEquals("user tasks of the instance", 1, tasks.size());
          final var task = tasks.get(0);
          expectEquals("element of the task", "review", task.getElementId());
          expectEquals("candidate groups of the task", List.of("sales"), task.getCandidateGroups());
          join(client.newAssignUserTaskCommand(task.getUserTaskKey()).assignee(assignee).send());
          return task.getUserTaskKey();
        }
        expect(System.nanoTime() < deadline, "the user task search found nothing within 10 s");
        sleep(200);
      }
    } catch (final ProblemException e) {
      if (e.code() != 501) {
        throw e;
      }
      skip(
          "user task search (POST /v2/user-tasks/search)",
          "Beeline answers 501 (" + e.details().getDetail() + "); the task is found by assigning the keys after"
              + " its instance's");
    }
    while (true) {
      for (long candidate = instance + 1; candidate <= instance + 50; candidate++) {
        final long key = candidate;
        final Throwable error = failure(() -> client.newAssignUserTaskCommand(key).assignee(assignee).send());
        if (error == null) {
          return key;
        }
        expectProblem(Refusal.of(404, "NOT_FOUND", null, null), error, "assigning key " + key);
      }
      // The task may not be created yet.
      expect(System.nanoTime() < deadline, "no user task among the 50 keys after the instance's key " + instance);
      sleep(100);
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
  private static void expectSameNumbers(
      final String what, final Numbers sent, final List<Double> doubles, final List<Long> longs) {
    expectEquals(what + ": count of doubles", sent.doubles.size(), doubles == null ? -1 : doubles.size());
    for (int i = 0; i < sent.doubles.size(); i++) {
      if (!sent.doubles.get(i).equals(doubles.get(i))) {
        throw new AssertionError(
            what + ": double " + i + " went in as " + sent.doubles.get(i) + " and came back as " + doubles.get(i));
      }
    }
    expectEquals(what + ": longs", sent.longs, longs);
  }

  /**
   * Numbers as a Java worker holds them: random doubles in [0, 1) (ids and amounts), doubles of
   * any exponent (random bit patterns) and longs beyond 2^53, through create, job activation,
   * completion and the instance's result, compared in {@code double} and {@code long}.
   */
  private static void randomNumbers() {
    final long seed = System.nanoTime();
    final Random random = new Random(seed);
    final Numbers sent = new Numbers();
    sent.doubles = new ArrayList<>();
    while (sent.doubles.size() < 100) {
      sent.doubles.add(random.nextDouble());
    }
    while (sent.doubles.size() < 200) {
      final double d = Double.longBitsToDouble(random.nextLong());
      if (Double.isFinite(d)) {
        sent.doubles.add(d);
      }
    }
    sent.longs =
        List.of(Long.MAX_VALUE, Long.MIN_VALUE, (1L << 53) + 1, -((1L << 53) + 1), random.nextLong(), random.nextLong());
    final CamundaFuture<ProcessInstanceResult> pending =
        client
            .newCreateInstanceCommand()
            .bpmnProcessId(id("numbers"))
            .latestVersion()
            .variables(sent)
            .withResult()
            .requestTimeout(Duration.ofSeconds(JOIN_SECONDS))
            .send();
    final ActivatedJob job = activateOne(id("numbers"), Duration.ofSeconds(10));
    final Numbers seen = job.getVariablesAsType(Numbers.class);
    expectSameNumbers("the activated job (seed " + seed + ")", sent, seen.doubles, seen.longs);
    final NumbersBack back = new NumbersBack();
    back.doublesBack = seen.doubles;
    back.longsBack = seen.longs;
    join(client.newCompleteCommand(job).variables(back).send());
    final ProcessInstanceResult result = join(pending);
    final Numbers kept = result.getVariablesAsType(Numbers.class);
    expectSameNumbers("the instance's result (seed " + seed + ")", sent, kept.doubles, kept.longs);
    final NumbersBack returned = result.getVariablesAsType(NumbersBack.class);
    expectSameNumbers(
        "the completed job's variables in the result (seed " + seed + ")", sent, returned.doublesBack,
        returned.longsBack);
  }

  private static void clock() {
    // An instance waits on a one-hour timer.
    final CamundaFuture<ProcessInstanceResult> waiting =
        client
            .newCreateInstanceCommand()
            .bpmnProcessId(id("timer"))
            .latestVersion()
            .withResult()
            .requestTimeout(Duration.ofSeconds(JOIN_SECONDS))
            .send();
    sleep(300);
    if (waiting.isDone()) {
      throw new AssertionError("the one-hour timer fired at once: " + describeDone(waiting));
    }
    final Instant pinned = Instant.now().plus(Duration.ofHours(2)).truncatedTo(java.time.temporal.ChronoUnit.SECONDS);
    join(client.newPinClockCommand().time(pinned).send());
    try {
      // Two hours later by the engine's clock, the timer has fired.
      final ProcessInstanceResult result = join(waiting);
      expectEquals("the timer's process", id("timer"), result.getBpmnProcessId());

      // A job activated now gets its deadline from the pinned clock.
      createOne(id("clock"), Map.of());
      final ActivatedJob job = activateOne(id("clock"), Duration.ofSeconds(10));
      expectEquals(
          "deadline of a job activated with a one-minute timeout",
          pinned.plus(Duration.ofMinutes(1)).toEpochMilli(),
          job.getDeadline());
      join(client.newCompleteCommand(job).send());
    } finally {
      join(client.newResetClockCommand().send());
    }
    // Reset: the engine's clock is the system's again.
    createOne(id("clock"), Map.of());
    final ActivatedJob job = activateOne(id("clock"), Duration.ofSeconds(10));
    final long untilDeadline = job.getDeadline() - System.currentTimeMillis();
    expect(
        untilDeadline > 50_000 && untilDeadline <= 61_000,
        "after the reset, the deadline is a minute from now, got " + untilDeadline + " ms");
    join(client.newCompleteCommand(job).send());
  }

  /** The node's request counts: every command of the run went over the run's transport. */
  private static void transportUsed(final Map<String, Long> before) {
    final Map<String, Long> after = requestCounts();
    final Map<String, Long> delta = new TreeMap<>();
    after.forEach((name, count) -> {
      final long grown = count - before.getOrDefault(name, 0L);
      if (grown > 0) {
        delta.put(name, grown);
      }
    });
    // The commands the client has over both transports, by the gateway's operation names.
    final List<String> dual =
        List.of(
            "Topology", "DeployResource", "CreateProcessInstance", "ActivateJobs", "CompleteJob", "FailJob",
            "ThrowError", "SetVariables", "ResolveIncident", "CancelProcessInstance", "PublishMessage",
            "BroadcastSignal", "EvaluateDecision");
    final List<String> restOnly = List.of("CorrelateMessage", "PinClock", "ResetClock", "UpdateJob");
    final String other = transport == Transport.REST ? "grpc" : "rest";
    for (final String operation : dual) {
      expect(
          delta.keySet().stream().anyMatch(name -> name.startsWith(transport.prefix + " " + operation)),
          "no " + operation + " call over " + transport.prefix + " in the node's metrics; calls made: " + delta);
      expect(
          delta.keySet().stream().noneMatch(name -> name.startsWith(other + " " + operation)),
          operation + " went over " + other + " too; calls made: " + delta);
    }
    for (final String operation : restOnly) {
      expect(delta.containsKey("rest " + operation), "no " + operation + " call over REST; calls made: " + delta);
    }
  }

  /** beeline_gateway_requests_total per "api rpc", from the node's metrics. */
  private static Map<String, Long> requestCounts() {
    final String text;
    try {
      final HttpResponse<String> response =
          HttpClient.newHttpClient()
              .send(HttpRequest.newBuilder(URI.create(monitoring + "/metrics")).build(), HttpResponse.BodyHandlers.ofString());
      text = response.body();
    } catch (final Exception e) {
      throw new AssertionError("cannot read the node's metrics: " + e);
    }
    final Pattern line =
        Pattern.compile("^beeline_gateway_requests_total\\{api=\"(\\w+)\",rpc=\"(\\w+)\",code=\"\\w+\"\\} (\\d+)$");
    final Map<String, Long> counts = new HashMap<>();
    for (final String l : text.split("\n")) {
      final Matcher m = line.matcher(l);
      if (m.matches()) {
        counts.merge(m.group(1) + " " + m.group(2), Long.parseLong(m.group(3)), Long::sum);
      }
    }
    return counts;
  }

  // ---------------------------------------------------------------------------------------
  // Helpers
  // ---------------------------------------------------------------------------------------

  @FunctionalInterface
  private interface Check {
    void run() throws Exception;
  }

  /** BEELINE_CHECKS=<regex>: run only the matching checks (and the deployment). */
  private static final Pattern ONLY = Pattern.compile(System.getenv().getOrDefault("BEELINE_CHECKS", ".*"));

  private static void check(final String name, final Check body) {
    if (!ONLY.matcher(name).find() && !name.startsWith("deploy: BPMN and DMN")) {
      return;
    }
    final String label = transport.prefix + ": " + name;
    checks++;
    final long start = System.nanoTime();
    try {
      body.run();
      System.out.println("ok    " + label);
    } catch (final Throwable t) {
      failures++;
      System.out.println("FAIL  " + label + ": " + describe(t));
    }
    final long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
    if (ms > 5000) {
      System.out.println("      (took " + ms + " ms)");
    }
    System.out.flush();
  }

  /** Something Beeline does not serve yet: said, and counted apart from the checks. */
  private static void skip(final String what, final String why) {
    skips++;
    System.out.println("skip  " + transport.prefix + ": " + what + ": " + why);
  }

  private static String describe(final Throwable t) {
    if (t instanceof AssertionError) {
      return t.getMessage();
    }
    if (t instanceof ProblemException e) {
      return "unexpected HTTP " + e.code() + ": " + e.details();
    }
    if (t instanceof ClientStatusException e) {
      return "unexpected gRPC " + e.getStatusCode() + ": " + e.getMessage();
    }
    return t.getClass().getSimpleName() + ": " + t.getMessage();
  }

  private static <T> T join(final CamundaFuture<T> future) {
    try {
      return future.join(JOIN_SECONDS, TimeUnit.SECONDS);
    } catch (final CompletionException e) {
      throw unwrap(e);
    }
  }

  private static RuntimeException unwrap(final RuntimeException e) {
    Throwable cause = e;
    while ((cause instanceof CompletionException || cause instanceof ExecutionException) && cause.getCause() != null) {
      cause = cause.getCause();
    }
    return cause instanceof RuntimeException r ? r : e;
  }

  private static void sleep(final long ms) {
    try {
      Thread.sleep(ms);
    } catch (final InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError("interrupted");
    }
  }

  private static String describeDone(final CamundaFuture<?> future) {
    try {
      return String.valueOf(future.join());
    } catch (final RuntimeException e) {
      return e.toString();
    }
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

  /**
   * How a refused call must look: over REST a problem with this HTTP status and title, whose
   * detail mentions {@code mentions} and whose instance is {@code path} (when given); over
   * gRPC this status code, its message mentioning {@code mentions}.
   */
  private record Refusal(int http, String title, Status.Code grpc, String mentions, String path) {
    static Refusal of(final int http, final String title, final Status.Code grpc, final String mentions) {
      return new Refusal(http, title, grpc, mentions, null);
    }

    Refusal at(final String requestPath) {
      return new Refusal(http, title, grpc, mentions, requestPath);
    }
  }

  /** The call must fail as {@code refusal} says, over the run's transport. */
  private static void expectError(final Refusal refusal, final Supplier<CamundaFuture<?>> call) {
    final Throwable error = failure(call);
    if (error == null) {
      throw new AssertionError("expected " + expectedText(refusal, transport == Transport.REST) + ", but the call succeeded");
    }
    expectRefusal(refusal, error, "the call");
  }

  /** The call, which the client only has over REST, must fail as {@code refusal} says. */
  private static void expectRestError(final Refusal refusal, final Supplier<CamundaFuture<?>> call) {
    final Throwable error = failure(call);
    if (error == null) {
      throw new AssertionError("expected " + expectedText(refusal, true) + ", but the call succeeded");
    }
    expectProblem(refusal, error, "the call");
  }

  /** The error the call ends with, or null when it succeeds. */
  private static Throwable failure(final Supplier<CamundaFuture<?>> call) {
    try {
      join(call.get());
      return null;
    } catch (final RuntimeException e) {
      return unwrap(e);
    }
  }

  private static String expectedText(final Refusal refusal, final boolean rest) {
    return rest ? "HTTP " + refusal.http() + " " + refusal.title() : "gRPC " + refusal.grpc();
  }

  private static void expectRefusal(final Refusal refusal, final Throwable error, final String what) {
    if (transport == Transport.REST) {
      expectProblem(refusal, error, what);
      return;
    }
    if (!(error instanceof ClientStatusException e)) {
      throw new AssertionError(what + ": expected gRPC " + refusal.grpc() + ", got " + describe(error));
    }
    if (e.getStatusCode() != refusal.grpc()) {
      throw new AssertionError(
          what + ": expected gRPC " + refusal.grpc() + ", got " + e.getStatusCode() + ": " + e.getMessage());
    }
    if (refusal.mentions() != null && (e.getMessage() == null || !e.getMessage().contains(refusal.mentions()))) {
      throw new AssertionError(
          what + ": expected the " + refusal.grpc() + " message to mention '" + refusal.mentions() + "', got: "
              + e.getMessage());
    }
  }

  private static void expectProblem(final Refusal refusal, final Throwable error, final String what) {
    if (!(error instanceof ProblemException e)) {
      throw new AssertionError(what + ": expected HTTP " + refusal.http() + " with a problem, got " + describe(error));
    }
    final ProblemDetail problem = e.details();
    final String seen = "HTTP " + e.code() + " " + problem;
    expectEquals(what + ": HTTP status (" + seen + ")", refusal.http(), e.code());
    expectEquals(what + ": the problem's status (" + seen + ")", refusal.http(), problem.getStatus());
    expectEquals(what + ": the problem's title (" + seen + ")", refusal.title(), problem.getTitle());
    expect(
        problem.getDetail() != null && !problem.getDetail().isBlank(),
        what + ": a problem detail a person can act on, got " + seen);
    if (refusal.mentions() != null) {
      expect(problem.getDetail().contains(refusal.mentions()),
          what + ": expected the detail to mention '" + refusal.mentions() + "', got " + seen);
    }
    if (refusal.path() != null) {
      expectEquals(what + ": the problem's instance (" + seen + ")", URI.create(refusal.path()), problem.getInstance());
    }
  }

  private static long createOne(final String processId, final Map<String, Object> variables) {
    return join(client.newCreateInstanceCommand().bpmnProcessId(processId).latestVersion().variables(variables).send())
        .getProcessInstanceKey();
  }

  private static List<ActivatedJob> activate(final String type, final int max, final Duration wait) {
    return join(
            client
                .newActivateJobsCommand()
                .jobType(type)
                .maxJobsToActivate(max)
                .timeout(Duration.ofMinutes(1))
                .workerName("camunda-client-compat")
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
      throw new AssertionError("expected no job of type " + type + " " + when + ", got " + jobs.size()
          + " (first: key " + jobs.get(0).getKey() + ", retries " + jobs.get(0).getRetries() + ")");
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
}
