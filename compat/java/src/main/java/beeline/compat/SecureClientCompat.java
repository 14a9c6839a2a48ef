package beeline.compat;

import io.camunda.zeebe.client.CredentialsProvider;
import io.camunda.zeebe.client.ZeebeClient;
import io.camunda.zeebe.client.ZeebeClientBuilder;
import io.camunda.zeebe.client.api.response.ActivatedJob;
import io.camunda.zeebe.client.api.response.DeploymentEvent;
import io.camunda.zeebe.client.api.response.ProcessInstanceEvent;
import io.camunda.zeebe.client.api.response.Topology;
import io.camunda.zeebe.client.api.worker.JobWorker;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Base64;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * Zeebe's Java client over TLS and with credentials, against a broker started with
 * --tls-certificate and either OIDC (--auth-oidc-jwks) or basic users (--auth-basic-users).
 *
 * <pre>
 * SecureClientCompat oauth ADDRESS CA_PEM TOKEN_URL CLIENT_ID SECRET MODEL WORK_DIR
 * SecureClientCompat basic ADDRESS CA_PEM USER PASSWORD MODEL
 * </pre>
 *
 * <p>With its credentials the client reads the topology, deploys, starts an instance and a job
 * worker completes its job; without them, with wrong ones, or without trusting the CA, nothing
 * is served.
 */
public final class SecureClientCompat {
  private static final Duration TIMEOUT = Duration.ofSeconds(15);
  private static int checks;
  private static int failures;

  private interface Check {
    void run() throws Exception;
  }

  public static void main(final String[] args) throws Exception {
    final String mode = args[0];
    final String address = args[1];
    final String ca = args[2];
    final CredentialsProvider good;
    final CredentialsProvider wrong;
    final Path model;
    if (mode.equals("oauth")) {
      final Path work = Path.of(args[7]);
      good = oauth(args[3], args[4], args[5], work.resolve("good-cache"));
      wrong = oauth(args[3], args[4], "not-the-secret", work.resolve("wrong-cache"));
      model = Path.of(args[6]);
    } else {
      good = basic(args[3], args[4]);
      wrong = basic(args[3], "not-the-password");
      model = Path.of(args[5]);
    }

    try (ZeebeClient client = client(address, ca, good)) {
      check(mode + ": topology over TLS with credentials", () -> {
        final Topology topology = client.newTopologyRequest().send().join();
        expect(topology.getBrokers().size() == 1, "one broker, got " + topology.getBrokers());
      });
      check(mode + ": deploy, start, and a worker completes the job", () -> {
        final DeploymentEvent deployment =
            client.newDeployResourceCommand().addResourceFile(model.toString()).send().join();
        final String processId = deployment.getProcesses().get(0).getBpmnProcessId();
        final String jobType = "secure-" + mode;
        final CompletableFuture<ActivatedJob> done = new CompletableFuture<>();
        try (JobWorker worker =
            client
                .newWorker()
                .jobType(jobType)
                .handler(
                    (jobClient, job) -> {
                      jobClient.newCompleteCommand(job).variables(Map.of("done", true)).send().join();
                      done.complete(job);
                    })
                .open()) {
          final ProcessInstanceEvent instance =
              client
                  .newCreateInstanceCommand()
                  .bpmnProcessId(processId)
                  .latestVersion()
                  .variables(Map.of("jobType", jobType, "retries", 1))
                  .send()
                  .join();
          final ActivatedJob job = done.get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);
          expect(
              job.getProcessInstanceKey() == instance.getProcessInstanceKey(),
              "the job of instance " + instance.getProcessInstanceKey() + ", got " + job);
        }
      });
    }

    try (ZeebeClient client = client(address, ca, null)) {
      check(mode + ": without credentials: UNAUTHENTICATED", () -> expectStatus(client, Status.Code.UNAUTHENTICATED));
    }
    try (ZeebeClient client = client(address, ca, wrong)) {
      check(mode + ": with wrong credentials: refused", () -> expectRefused(client));
    }
    try (ZeebeClient client = client(address, null, good)) {
      check(mode + ": not trusting the server's CA: no connection", () -> expectStatus(client, Status.Code.UNAVAILABLE));
    }

    if (failures > 0) {
      System.out.println(failures + " of " + checks + " secure Java client check(s) failed");
      System.exit(1);
    }
    System.out.println("all " + checks + " secure Java client checks passed");
    System.exit(0);
  }

  private static ZeebeClient client(
      final String address, final String ca, final CredentialsProvider credentials) {
    ZeebeClientBuilder builder =
        ZeebeClient.newClientBuilder()
            .grpcAddress(URI.create("https://" + address))
            .restAddress(URI.create("https://127.0.0.1:1"))
            .preferRestOverGrpc(false)
            .applyEnvironmentVariableOverrides(false)
            .defaultRequestTimeout(TIMEOUT);
    if (ca != null) {
      builder = builder.caCertificatePath(ca);
    }
    if (credentials != null) {
      builder = builder.credentialsProvider(credentials);
    }
    return builder.build();
  }

  private static CredentialsProvider oauth(
      final String tokenUrl, final String clientId, final String secret, final Path cache)
      throws Exception {
    Files.createDirectories(cache);
    return CredentialsProvider.newCredentialsProviderBuilder()
        .applyEnvironmentOverrides(false)
        .authorizationServerUrl(tokenUrl)
        .clientId(clientId)
        .clientSecret(secret)
        .audience("zeebe-api")
        .credentialsCachePath(cache.resolve("credentials").toString())
        .build();
  }

  /** HTTP basic credentials, sent as the client sends any: through its CredentialsProvider. */
  private static CredentialsProvider basic(final String user, final String password) {
    final String value =
        "Basic "
            + Base64.getEncoder()
                .encodeToString((user + ":" + password).getBytes(StandardCharsets.UTF_8));
    return new CredentialsProvider() {
      @Override
      public void applyCredentials(final CredentialsApplier applier) {
        applier.put("Authorization", value);
      }

      @Override
      public boolean shouldRetryRequest(final StatusCode statusCode) {
        return false;
      }
    };
  }

  private static void expectStatus(final ZeebeClient client, final Status.Code code) {
    try {
      client.newTopologyRequest().send().join();
      throw new AssertionError("expected " + code + ", but the topology was served");
    } catch (final RuntimeException e) {
      final Throwable cause = rootStatus(e);
      expect(
          cause instanceof StatusRuntimeException sre && sre.getStatus().getCode() == code,
          "expected " + code + ", got " + e);
    }
  }

  /** Wrong OAuth credentials get no token (the client fails before sending); wrong basic ones get UNAUTHENTICATED. */
  private static void expectRefused(final ZeebeClient client) {
    try {
      client.newTopologyRequest().send().join();
      throw new AssertionError("expected a refusal, but the topology was served");
    } catch (final RuntimeException e) {
      final Throwable cause = rootStatus(e);
      final StringBuilder chain = new StringBuilder();
      for (Throwable t = e; t != null; t = t.getCause()) {
        chain.append(" <- ").append(t);
      }
      final String text = chain.toString();
      expect(
          (cause instanceof StatusRuntimeException sre
                  && sre.getStatus().getCode() == Status.Code.UNAUTHENTICATED)
              || text.contains("401")
              || text.contains("invalid_client"),
          "expected UNAUTHENTICATED or a refused token request, got " + text);
    }
  }

  private static Throwable rootStatus(final Throwable error) {
    Throwable cause = error;
    while (cause != null && !(cause instanceof StatusRuntimeException)) {
      cause = cause.getCause();
    }
    return cause == null ? error : cause;
  }

  private static void expect(final boolean condition, final String message) {
    if (!condition) {
      throw new AssertionError(message);
    }
  }

  private static void check(final String name, final Check body) {
    checks++;
    try {
      body.run();
      System.out.println("ok    " + name);
    } catch (final Throwable e) {
      failures++;
      System.out.println("FAIL  " + name + ": " + e);
    }
  }
}
