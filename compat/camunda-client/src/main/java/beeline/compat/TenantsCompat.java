package beeline.compat;

import io.camunda.client.CamundaClient;
import io.camunda.client.api.CamundaFuture;
import io.camunda.client.api.command.ClientStatusException;
import io.camunda.client.api.command.ProblemException;
import io.camunda.client.api.response.ActivatedJob;
import io.camunda.client.api.response.DeploymentEvent;
import io.camunda.client.api.response.ProcessInstanceEvent;
import io.camunda.client.api.search.enums.ProcessInstanceState;
import io.camunda.client.api.search.response.ProcessInstance;
import io.camunda.client.impl.basicauth.BasicAuthCredentialsProviderBuilder;
import io.camunda.zeebe.model.bpmn.Bpmn;
import io.camunda.zeebe.model.bpmn.BpmnModelInstance;
import io.grpc.Status;
import java.net.URI;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;

/**
 * Multi-tenancy with Camunda's Java client against a Beeline node started with
 * {@code --multi-tenancy}, basic users alice (tenant-a) and bob (tenant-b): each user's client
 * has its {@code defaultTenantId} and {@code defaultJobWorkerTenantIds}. Both deploy a process
 * with the same id, start instances with the same correlation key, work their jobs and publish
 * a message; nothing of one tenant reaches the other, a tenant not the user's is refused
 * (PERMISSION_DENIED over gRPC, 403 over REST), and searches show each user its own tenant's
 * instances only. Once over REST (the client's default) and once over gRPC.
 *
 * <p>Usage: java beeline.compat.TenantsCompat <grpc host:port> <rest URL>
 */
public final class TenantsCompat {

  private static final String A = "tenant-a";
  private static final String B = "tenant-b";
  private static int failures;

  private interface Check {
    void run() throws Exception;
  }

  private static void check(final String name, final Check body) {
    try {
      body.run();
      System.out.println("ok    " + name);
    } catch (final Throwable e) {
      failures++;
      System.out.println("FAIL  " + name + ": " + e);
    }
  }

  private static <T> T join(final CamundaFuture<T> future) {
    return future.join(30, TimeUnit.SECONDS);
  }

  private static void expect(final String what, final Object expected, final Object actual) {
    if (!expected.equals(actual)) {
      throw new AssertionError(what + ": expected " + expected + ", got " + actual);
    }
  }

  private static CamundaClient client(
      final URI grpc, final URI rest, final boolean overRest, final String user, final String tenant) {
    final var builder =
        CamundaClient.newClientBuilder()
            .grpcAddress(grpc)
            .restAddress(rest)
            .credentialsProvider(
                new BasicAuthCredentialsProviderBuilder()
                    .applyEnvironmentOverrides(false)
                    .username(user)
                    .password(user + "-pw")
                    .build())
            .defaultTenantId(tenant)
            .defaultJobWorkerTenantIds(List.of(tenant))
            .defaultRequestTimeout(Duration.ofSeconds(20));
    if (!overRest) {
      builder.preferRestOverGrpc(false);
    }
    return builder.build();
  }

  private static BpmnModelInstance process(final String id) {
    return Bpmn.createExecutableProcess(id)
        .startEvent()
        .serviceTask("pack", t -> t.zeebeJobType(id + "-pack"))
        .intermediateCatchEvent(
            "paid", e -> e.message(m -> m.name(id + "-payment").zeebeCorrelationKeyExpression("orderId")))
        .endEvent()
        .done();
  }

  /** The user's view of the instances of `id`, waiting until `ready` holds (searches lag). */
  private static List<ProcessInstance> instances(
      final CamundaClient client, final String id, final java.util.function.Predicate<List<ProcessInstance>> ready)
      throws InterruptedException {
    final Instant until = Instant.now().plusSeconds(20);
    List<ProcessInstance> found;
    do {
      found = join(client.newProcessInstanceSearchRequest().filter(f -> f.processDefinitionId(id)).send()).items();
      if (ready.test(found)) {
        return found;
      }
      Thread.sleep(100);
    } while (Instant.now().isBefore(until));
    return found;
  }

  /** A refusal as the user sees it: the gRPC code, or the REST status. */
  private static void expectRefused(final boolean overRest, final Runnable call) {
    try {
      call.run();
    } catch (final CompletionException | ClientStatusException | ProblemException e) {
      final Throwable cause = e instanceof CompletionException ? e.getCause() : e;
      if (overRest && cause instanceof ProblemException problem) {
        expect("HTTP status", 403, problem.code());
        expect("title", "FORBIDDEN", problem.details().getTitle());
        return;
      }
      if (!overRest && cause instanceof ClientStatusException status) {
        expect("gRPC code", Status.Code.PERMISSION_DENIED, status.getStatusCode());
        return;
      }
      throw new AssertionError("refused with " + cause);
    }
    throw new AssertionError("not refused");
  }

  public static void main(final String[] args) throws Exception {
    if (args.length != 2) {
      System.err.println("usage: TenantsCompat <grpc host:port> <rest URL>");
      System.exit(2);
    }
    final URI grpc = URI.create("http://" + args[0]);
    final URI rest = URI.create(args[1]);
    for (final boolean overRest : new boolean[] {true, false}) {
      final String run = overRest ? "rest" : "grpc";
      System.out.println("---- two tenants over " + run.toUpperCase());
      final String id = run + "-tenant-order";
      try (CamundaClient alice = client(grpc, rest, overRest, "alice", A);
          CamundaClient bob = client(grpc, rest, overRest, "bob", B)) {
        final long[] instances = new long[2];
        check(
            run + ": the same process id deploys in each user's default tenant, version 1 each",
            () -> {
              final DeploymentEvent inA =
                  join(alice.newDeployResourceCommand().addProcessModel(process(id), id + ".bpmn").send());
              final DeploymentEvent inB =
                  join(bob.newDeployResourceCommand().addProcessModel(process(id), id + ".bpmn").send());
              expect("A's deployment tenant", A, inA.getTenantId());
              expect("B's deployment tenant", B, inB.getTenantId());
              expect("A's process tenant", A, inA.getProcesses().get(0).getTenantId());
              expect("A's version", 1, inA.getProcesses().get(0).getVersion());
              expect("B's version", 1, inB.getProcesses().get(0).getVersion());
              if (inA.getProcesses().get(0).getProcessDefinitionKey()
                  == inB.getProcesses().get(0).getProcessDefinitionKey()) {
                throw new AssertionError("one definition for both tenants");
              }
            });
        check(
            run + ": each user starts an instance of its tenant's process",
            () -> {
              final ProcessInstanceEvent a =
                  join(alice.newCreateInstanceCommand().bpmnProcessId(id).latestVersion()
                      .variables(Map.of("orderId", "o-1")).send());
              final ProcessInstanceEvent b =
                  join(bob.newCreateInstanceCommand().bpmnProcessId(id).latestVersion()
                      .variables(Map.of("orderId", "o-1")).send());
              expect("A's instance tenant", A, a.getTenantId());
              expect("B's instance tenant", B, b.getTenantId());
              instances[0] = a.getProcessInstanceKey();
              instances[1] = b.getProcessInstanceKey();
            });
        check(
            run + ": a tenant not the user's is refused",
            () -> expectRefused(overRest, () -> join(alice.newCreateInstanceCommand().bpmnProcessId(id)
                .latestVersion().tenantId(B).send())));
        check(
            run + ": each worker gets its own tenant's job only",
            () -> {
              int index = 0;
              for (final CamundaClient worker : new CamundaClient[] {alice, bob}) {
                List<ActivatedJob> jobs = List.of();
                for (int i = 0; i < 50 && jobs.isEmpty(); i++) {
                  jobs = join(worker.newActivateJobsCommand().jobType(id + "-pack").maxJobsToActivate(10)
                      .requestTimeout(Duration.ofMillis(500)).send()).getJobs();
                }
                expect("jobs activated", 1, jobs.size());
                expect("the job's tenant", index == 0 ? A : B, jobs.get(0).getTenantId());
                expect("the job's instance", instances[index], jobs.get(0).getProcessInstanceKey());
                join(worker.newCompleteCommand(jobs.get(0).getKey()).send());
                index++;
              }
            });
        check(
            run + ": a message published in A completes A's instance only; searches show each its own",
            () -> {
              join(alice.newPublishMessageCommand().messageName(id + "-payment").correlationKey("o-1")
                  .timeToLive(Duration.ofMinutes(1)).send());
              final List<ProcessInstance> seenByAlice =
                  instances(alice, id, l -> !l.isEmpty() && l.get(0).getState() == ProcessInstanceState.COMPLETED);
              expect("instances alice sees", 1, seenByAlice.size());
              expect("alice's instance", instances[0], seenByAlice.get(0).getProcessInstanceKey());
              expect("alice's instance state", ProcessInstanceState.COMPLETED, seenByAlice.get(0).getState());
              expect("alice's instance tenant", A, seenByAlice.get(0).getTenantId());
              final List<ProcessInstance> seenByBob = instances(bob, id, l -> !l.isEmpty());
              expect("instances bob sees", 1, seenByBob.size());
              expect("bob's instance", instances[1], seenByBob.get(0).getProcessInstanceKey());
              expect("bob's instance state (its payment never came)", ProcessInstanceState.ACTIVE,
                  seenByBob.get(0).getState());
            });
        check(
            run + ": a user cannot get the other tenant's instance by its key",
            () -> {
              try {
                join(alice.newProcessInstanceGetRequest(instances[1]).send());
                throw new AssertionError("alice sees bob's instance");
              } catch (final ProblemException e) {
                expect("HTTP status", 404, e.code());
              }
            });
      }
    }
    if (failures > 0) {
      System.out.println(failures + " tenant checks failed");
      System.exit(1);
    }
  }
}
