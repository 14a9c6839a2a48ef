// The Go client compatibility suite: Zeebe's own Go client, through its public API only, against
// a running `beeline broker` (compat/go/run.sh starts one and passes its address in
// BEELINE_ADDRESS). Every check prints "ok    <check>" or "FAIL  <check>: <why>"; the program
// exits 1 when any check failed.
//
// The client is github.com/camunda/zeebe/clients/go/v8 at v8.5.25 (see go.mod): the module moved
// to github.com/camunda/camunda/clients/go/v8 for 8.6 and later, but the Go module proxy does not
// serve that path (403, "not available"), so the newest Go client that resolves is the last 8.5
// release under the old path. Its gRPC protocol is a subset of the 8.8 one Beeline serves.
package main

import (
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand"
	"os"
	"reflect"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/camunda/zeebe/clients/go/v8/pkg/entities"
	"github.com/camunda/zeebe/clients/go/v8/pkg/pb"
	"github.com/camunda/zeebe/clients/go/v8/pkg/worker"
	"github.com/camunda/zeebe/clients/go/v8/pkg/zbc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

//go:embed models
var models embed.FS

// The processes made from models/task.bpmn.tmpl: process id → job type. Each check has its own,
// so that no check takes another's jobs.
var taskProcesses = map[string]string{
	"go-poll":     "go-poll-work",
	"go-stream":   "go-stream-work",
	"go-direct":   "go-direct-work",
	"go-retry":    "go-retry-work",
	"go-incident": "go-incident-work",
	"go-timeout":  "go-timeout-work",
	"go-vars":     "go-vars-work",
	"go-cancel":   "go-cancel-work",
	"go-batch":    "go-batch-work",
	"go-wake":     "go-wake-work",
	"go-numbers":  "go-numbers-work",
}

var (
	client   zbc.Client
	failures int
	// runID makes message ids and correlation keys unique per run.
	runID = fmt.Sprintf("%d", time.Now().UnixNano())
)

func main() {
	address := os.Getenv("BEELINE_ADDRESS")
	if address == "" {
		fmt.Println("BEELINE_ADDRESS is not set (compat/go/run.sh sets it)")
		os.Exit(2)
	}
	var err error
	client, err = zbc.NewClient(&zbc.ClientConfig{
		GatewayAddress:         address,
		UsePlaintextConnection: true,
	})
	if err != nil {
		fmt.Printf("FAIL  connect to %s: %v\n", address, err)
		os.Exit(1)
	}
	defer client.Close()

	check("topology: one broker, 2 partitions, both led and healthy", checkTopology)
	check("deploy: BPMN and DMN resources, metadata of every process and decision", checkDeploy)
	check("deploy: the same resource again keeps its version and key", checkRedeploySame)
	check("deploy: a changed resource gets version 2", checkRedeployChanged)
	check("deploy: an invalid BPMN is INVALID_ARGUMENT", checkDeployInvalid)
	check("create instance: latest version, by version, by definition key", checkCreateInstance)
	check("create instance with result: returns the variables (and only those fetched)", checkCreateWithResult)
	check("create instance: start before an element (start instruction)", checkStartInstruction)
	check("variables: numbers, text, null and nesting survive a round trip unchanged", checkVariableRoundTrip)
	check("variables: 300 random doubles and large integers come back exactly (create, job, complete, result)", checkRandomNumbers)
	check("create instance: an unknown process is NOT_FOUND", checkCreateUnknown)
	check("create instance: variables that are not an object are INVALID_ARGUMENT", checkCreateInvalidVariables)
	check("activate jobs: one call collects the jobs of both partitions", checkActivateAcrossPartitions)
	check("activate jobs: a waiting long poll answers as soon as a job appears", checkLongPollWakes)
	check("job worker (polling): activates, completes with variables, instance result has them", checkPollingWorker)
	check("job worker (StreamEnabled, polling off): the stream delivers the job", checkStreamingWorker)
	check("stream jobs command: a job created while streaming arrives on the stream", checkStreamJobsCommand)
	check("fail job: retries left and a retry back-off delays the next activation", checkFailWithBackoff)
	check("fail job to 0 retries: incident; update retries + resolve: activatable again", checkIncident)
	check("job commands: invalid retries and variables are INVALID_ARGUMENT", checkJobInvalidArguments)
	check("throw error: caught by the error boundary event, variables passed on", checkThrowError)
	check("update job timeout: a shortened timeout makes the job activatable again", checkUpdateTimeout)
	check("set variables: local and global, seen by the job and the instance result", checkSetVariables)
	check("cancel instance: cancelled, its job gone; cancel again is NOT_FOUND", checkCancel)
	check("publish message: correlated to waiting catch events on both partitions", checkMessage)
	check("publish message: a buffered message (with a TTL) correlates to a later instance", checkBufferedMessage)
	check("broadcast signal: triggers a waiting intermediate signal catch event", checkSignalCatch)
	check("broadcast signal: starts an instance at a signal start event", checkSignalStart)
	check("evaluate decision: by id and by key, the output and evaluated decisions", checkEvaluateDecision)
	check("evaluate decision: an unknown decision is NOT_FOUND", checkEvaluateUnknown)
	check("publish, broadcast, evaluate: variables that are not an object are INVALID_ARGUMENT", checkOtherInvalidVariables)
	check("business rule task: the called decision's result in the instance result", checkBusinessRuleTask)
	check("unknown keys: complete, fail, retries, timeout, set variables, resolve are NOT_FOUND", checkUnknownKeys)

	if failures > 0 {
		fmt.Printf("%d Go client check(s) failed\n", failures)
		os.Exit(1)
	}
}

// check runs one check with its own deadline and prints its outcome.
func check(name string, run func(ctx context.Context) error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	start := time.Now()
	if err := run(ctx); err != nil {
		failures++
		fmt.Printf("FAIL  %s: %v\n", name, err)
		return
	}
	if elapsed := time.Since(start); elapsed > 3*time.Second {
		fmt.Printf("ok    %s (%.1fs)\n", name, elapsed.Seconds())
	} else {
		fmt.Printf("ok    %s\n", name)
	}
}

// --- helpers --------------------------------------------------------------------------------

func model(name string) []byte {
	data, err := models.ReadFile("models/" + name)
	if err != nil {
		panic(err)
	}
	return data
}

func taskModel(processID, jobType string) []byte {
	return []byte(fmt.Sprintf(string(model("task.bpmn.tmpl")), processID, jobType))
}

// expectCode: err must be a gRPC status with the code, and its message must contain every
// fragment.
func expectCode(err error, code codes.Code, fragments ...string) error {
	if err == nil {
		return fmt.Errorf("expected %s, but the call succeeded", code)
	}
	st, ok := status.FromError(err)
	if !ok {
		return fmt.Errorf("expected %s, got a non-gRPC error: %v", code, err)
	}
	if st.Code() != code {
		return fmt.Errorf("expected %s, got %s: %s", code, st.Code(), st.Message())
	}
	for _, fragment := range fragments {
		if !strings.Contains(st.Message(), fragment) {
			return fmt.Errorf("expected %s naming %q, got: %s", code, fragment, st.Message())
		}
	}
	return nil
}

func createInstance(ctx context.Context, processID string, variables map[string]interface{}) (*pb.CreateProcessInstanceResponse, error) {
	step := client.NewCreateInstanceCommand().BPMNProcessId(processID).LatestVersion()
	if variables != nil {
		withVars, err := step.VariablesFromMap(variables)
		if err != nil {
			return nil, err
		}
		step = withVars
	}
	created, err := step.Send(ctx)
	if err != nil {
		return nil, fmt.Errorf("create an instance of %s: %w", processID, err)
	}
	return created, nil
}

// activate activates up to max jobs of a type. wait > 0 long-polls that long; wait 0 asks once
// without waiting.
func activate(ctx context.Context, jobType string, max int32, wait time.Duration, jobTimeout time.Duration) ([]entities.Job, error) {
	var callCtx context.Context
	var cancel context.CancelFunc
	if wait > 0 {
		// The client derives the long-poll requestTimeout from the deadline (minus 10%).
		callCtx, cancel = context.WithTimeout(ctx, wait)
	} else {
		// Without a deadline the client sends requestTimeout -1: answer at once. A timer still
		// ends the call should the gateway never answer.
		callCtx, cancel = context.WithCancel(context.Background())
		stop := time.AfterFunc(10*time.Second, cancel)
		defer stop.Stop()
	}
	defer cancel()
	jobs, err := client.NewActivateJobsCommand().JobType(jobType).MaxJobsToActivate(max).
		Timeout(jobTimeout).WorkerName("go-compat").Send(callCtx)
	if err != nil {
		return nil, fmt.Errorf("activate jobs of type %s: %w", jobType, err)
	}
	return jobs, nil
}

// activateOne long-polls until one job of the type is activated.
func activateOne(ctx context.Context, jobType string, jobTimeout time.Duration) (entities.Job, error) {
	deadline := time.Now().Add(12 * time.Second)
	for time.Now().Before(deadline) {
		jobs, err := activate(ctx, jobType, 1, 5*time.Second, jobTimeout)
		if err != nil {
			return entities.Job{}, err
		}
		if len(jobs) > 1 {
			return entities.Job{}, fmt.Errorf("asked for 1 job of type %s, got %d", jobType, len(jobs))
		}
		if len(jobs) == 1 {
			return jobs[0], nil
		}
	}
	return entities.Job{}, fmt.Errorf("no job of type %s became activatable within 12 s", jobType)
}

func jobVariables(job entities.Job) (map[string]interface{}, error) {
	vars, err := job.GetVariablesAsMap()
	if err != nil {
		return nil, fmt.Errorf("job %d: variables %q are not a JSON object: %w", job.Key, job.Variables, err)
	}
	return vars, nil
}

func parseVariables(document string) (map[string]interface{}, error) {
	vars := map[string]interface{}{}
	if err := json.Unmarshal([]byte(document), &vars); err != nil {
		return nil, fmt.Errorf("variables %q are not a JSON object: %w", document, err)
	}
	return vars, nil
}

// expectVariables: every wanted variable is present with the value (compared as JSON values).
func expectVariables(what string, got map[string]interface{}, want map[string]interface{}) error {
	for name, value := range want {
		actual, ok := got[name]
		if !ok {
			return fmt.Errorf("%s: variable %q missing in %v", what, name, got)
		}
		wantJSON, _ := json.Marshal(value)
		var normalized interface{}
		_ = json.Unmarshal(wantJSON, &normalized)
		if !reflect.DeepEqual(actual, normalized) {
			return fmt.Errorf("%s: variable %q is %v, expected %v", what, name, actual, value)
		}
	}
	return nil
}

func complete(ctx context.Context, jobKey int64, variables map[string]interface{}) error {
	step := client.NewCompleteJobCommand().JobKey(jobKey)
	if variables != nil {
		withVars, err := step.VariablesFromMap(variables)
		if err != nil {
			return err
		}
		if _, err := withVars.Send(ctx); err != nil {
			return fmt.Errorf("complete job %d: %w", jobKey, err)
		}
		return nil
	}
	if _, err := step.Send(ctx); err != nil {
		return fmt.Errorf("complete job %d: %w", jobKey, err)
	}
	return nil
}

// expectNoJob: nothing of the type is activatable right now.
func expectNoJob(ctx context.Context, jobType string, why string) error {
	jobs, err := activate(ctx, jobType, 10, 0, time.Minute)
	if err != nil {
		return err
	}
	if len(jobs) > 0 {
		return fmt.Errorf("%s, but job %d of type %s was activated", why, jobs[0].Key, jobType)
	}
	return nil
}

// --- checks ---------------------------------------------------------------------------------

func checkTopology(ctx context.Context) error {
	topology, err := client.NewTopologyCommand().Send(ctx)
	if err != nil {
		return err
	}
	if topology.ClusterSize != 1 || topology.PartitionsCount != 2 || topology.ReplicationFactor != 1 {
		return fmt.Errorf("cluster size %d, partitions %d, replication %d; expected 1, 2, 1",
			topology.ClusterSize, topology.PartitionsCount, topology.ReplicationFactor)
	}
	if topology.GatewayVersion == "" {
		return errors.New("no gateway version")
	}
	if len(topology.Brokers) != 1 {
		return fmt.Errorf("%d brokers, expected 1", len(topology.Brokers))
	}
	broker := topology.Brokers[0]
	if broker.Host == "" || broker.Port <= 0 || broker.Version == "" {
		return fmt.Errorf("broker host %q, port %d, version %q", broker.Host, broker.Port, broker.Version)
	}
	var partitions []string
	for _, partition := range broker.Partitions {
		partitions = append(partitions, fmt.Sprintf("%d:%s:%s", partition.PartitionId, partition.Role, partition.Health))
	}
	sort.Strings(partitions)
	want := "1:LEADER:HEALTHY 2:LEADER:HEALTHY"
	if strings.Join(partitions, " ") != want {
		return fmt.Errorf("partitions %v, expected %s", partitions, want)
	}
	return nil
}

// deployed: process id → definition key, from the first deployment.
var deployed = map[string]int64{}
var dishDecisionKey int64

func checkDeploy(ctx context.Context) error {
	command := client.NewDeployResourceCommand()
	var taskIDs []string
	for id := range taskProcesses {
		taskIDs = append(taskIDs, id)
	}
	sort.Strings(taskIDs)
	for _, id := range taskIDs {
		command = command.AddResource(taskModel(id, taskProcesses[id]), id+".bpmn")
	}
	for _, name := range []string{"noop.bpmn", "error.bpmn", "message.bpmn", "signal.bpmn", "decide.bpmn", "dish.dmn"} {
		command = command.AddResource(model(name), name)
	}
	response, err := command.Send(ctx)
	if err != nil {
		return err
	}
	if response.Key <= 0 {
		return fmt.Errorf("deployment key %d", response.Key)
	}
	wantResource := map[string]string{"go-noop": "noop.bpmn", "go-error": "error.bpmn",
		"go-message": "message.bpmn", "go-signal-catch": "signal.bpmn", "go-signal-start": "signal.bpmn",
		"go-decide": "decide.bpmn"}
	for _, id := range taskIDs {
		wantResource[id] = id + ".bpmn"
	}
	var decisions, requirements int
	for _, deployment := range response.Deployments {
		switch {
		case deployment.GetProcess() != nil:
			process := deployment.GetProcess()
			want, ok := wantResource[process.BpmnProcessId]
			if !ok {
				return fmt.Errorf("unexpected process %q in the response", process.BpmnProcessId)
			}
			if process.ResourceName != want || process.Version != 1 || process.ProcessDefinitionKey <= 0 {
				return fmt.Errorf("process %s: resource %q version %d key %d; expected %s, 1, > 0",
					process.BpmnProcessId, process.ResourceName, process.Version, process.ProcessDefinitionKey, want)
			}
			if process.TenantId != "<default>" {
				return fmt.Errorf("process %s: tenant %q, expected <default>", process.BpmnProcessId, process.TenantId)
			}
			deployed[process.BpmnProcessId] = process.ProcessDefinitionKey
		case deployment.GetDecision() != nil:
			decision := deployment.GetDecision()
			decisions++
			if decision.DmnDecisionId != "go-dish" || decision.DmnDecisionName != "Dish by season" ||
				decision.Version != 1 || decision.DecisionKey <= 0 || decision.DmnDecisionRequirementsId != "go-dishes" ||
				decision.DecisionRequirementsKey <= 0 {
				return fmt.Errorf("decision metadata %+v", decision)
			}
			dishDecisionKey = decision.DecisionKey
		case deployment.GetDecisionRequirements() != nil:
			drg := deployment.GetDecisionRequirements()
			requirements++
			if drg.DmnDecisionRequirementsId != "go-dishes" || drg.DmnDecisionRequirementsName != "Go compat dishes" ||
				drg.Version != 1 || drg.ResourceName != "dish.dmn" || drg.DecisionRequirementsKey <= 0 {
				return fmt.Errorf("decision requirements metadata %+v", drg)
			}
		default:
			return fmt.Errorf("deployment entry of no known kind: %+v", deployment)
		}
	}
	if len(deployed) != len(wantResource) {
		return fmt.Errorf("%d processes in the response, expected %d", len(deployed), len(wantResource))
	}
	if decisions != 1 || requirements != 1 {
		return fmt.Errorf("%d decisions and %d decision requirements, expected 1 and 1", decisions, requirements)
	}
	return nil
}

func checkRedeploySame(ctx context.Context) error {
	response, err := client.NewDeployResourceCommand().AddResource(model("noop.bpmn"), "noop.bpmn").Send(ctx)
	if err != nil {
		return err
	}
	if len(response.Deployments) != 1 || response.Deployments[0].GetProcess() == nil {
		return fmt.Errorf("expected one process in the response, got %v", response.Deployments)
	}
	process := response.Deployments[0].GetProcess()
	if process.Version != 1 || process.ProcessDefinitionKey != deployed["go-noop"] {
		return fmt.Errorf("version %d key %d, expected the first deployment's 1 and %d",
			process.Version, process.ProcessDefinitionKey, deployed["go-noop"])
	}
	return nil
}

func checkRedeployChanged(ctx context.Context) error {
	changed := strings.Replace(string(model("noop.bpmn")), `name="Go compat no-op"`, `name="Go compat no-op, v2"`, 1)
	response, err := client.NewDeployResourceCommand().AddResource([]byte(changed), "noop.bpmn").Send(ctx)
	if err != nil {
		return err
	}
	if len(response.Deployments) != 1 || response.Deployments[0].GetProcess() == nil {
		return fmt.Errorf("expected one process in the response, got %v", response.Deployments)
	}
	process := response.Deployments[0].GetProcess()
	if process.Version != 2 || process.ProcessDefinitionKey == deployed["go-noop"] {
		return fmt.Errorf("version %d key %d, expected 2 and a new key", process.Version, process.ProcessDefinitionKey)
	}
	return nil
}

func checkDeployInvalid(ctx context.Context) error {
	_, err := client.NewDeployResourceCommand().
		AddResource([]byte(`<bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL"><bpmn:process id="broken"`), "broken.bpmn").
		Send(ctx)
	return expectCode(err, codes.InvalidArgument, "broken.bpmn")
}

func checkCreateInstance(ctx context.Context) error {
	latest, err := createInstance(ctx, "go-noop", nil)
	if err != nil {
		return err
	}
	if latest.BpmnProcessId != "go-noop" || latest.Version != 2 || latest.ProcessInstanceKey <= 0 ||
		latest.ProcessDefinitionKey <= 0 || latest.ProcessDefinitionKey == deployed["go-noop"] {
		return fmt.Errorf("latest version: %+v (expected version 2)", latest)
	}
	if latest.TenantId != "<default>" {
		return fmt.Errorf("tenant %q, expected <default>", latest.TenantId)
	}
	first, err := client.NewCreateInstanceCommand().BPMNProcessId("go-noop").Version(1).Send(ctx)
	if err != nil {
		return fmt.Errorf("version 1: %w", err)
	}
	if first.Version != 1 || first.ProcessDefinitionKey != deployed["go-noop"] {
		return fmt.Errorf("version 1: %+v", first)
	}
	byKey, err := client.NewCreateInstanceCommand().ProcessDefinitionKey(deployed["go-noop"]).Send(ctx)
	if err != nil {
		return fmt.Errorf("by definition key: %w", err)
	}
	if byKey.BpmnProcessId != "go-noop" || byKey.Version != 1 || byKey.ProcessInstanceKey == first.ProcessInstanceKey {
		return fmt.Errorf("by definition key: %+v", byKey)
	}
	return nil
}

func checkCreateWithResult(ctx context.Context) error {
	step, err := client.NewCreateInstanceCommand().BPMNProcessId("go-noop").LatestVersion().
		VariablesFromMap(map[string]interface{}{"a": 1, "b": "two", "c": map[string]interface{}{"d": []int{3, 4}}})
	if err != nil {
		return err
	}
	result, err := step.WithResult().Send(ctx)
	if err != nil {
		return err
	}
	if result.ProcessInstanceKey <= 0 || result.BpmnProcessId != "go-noop" || result.Version != 2 {
		return fmt.Errorf("result %+v", result)
	}
	vars, err := parseVariables(result.Variables)
	if err != nil {
		return err
	}
	if err := expectVariables("result", vars, map[string]interface{}{"a": 1, "b": "two",
		"c": map[string]interface{}{"d": []int{3, 4}}}); err != nil {
		return err
	}
	if len(vars) != 3 {
		return fmt.Errorf("result variables %v, expected exactly a, b, c", vars)
	}
	step, err = client.NewCreateInstanceCommand().BPMNProcessId("go-noop").LatestVersion().
		VariablesFromMap(map[string]interface{}{"a": 1, "b": "two"})
	if err != nil {
		return err
	}
	fetched, err := step.WithResult().FetchVariables("b").Send(ctx)
	if err != nil {
		return fmt.Errorf("with fetchVariables: %w", err)
	}
	vars, err = parseVariables(fetched.Variables)
	if err != nil {
		return err
	}
	if len(vars) != 1 || vars["b"] != "two" {
		return fmt.Errorf("fetchVariables [b]: got %v, expected only b", vars)
	}
	return nil
}

func checkStartInstruction(ctx context.Context) error {
	// go-error, started right before the task on its error path.
	created, err := client.NewCreateInstanceCommand().BPMNProcessId("go-error").LatestVersion().
		StartBeforeElement("handle").Send(ctx)
	if err != nil {
		return err
	}
	job, err := activateOne(ctx, "go-after-error", time.Minute)
	if err != nil {
		return err
	}
	if job.ProcessInstanceKey != created.ProcessInstanceKey || job.ElementId != "handle" {
		return fmt.Errorf("job of instance %d at %q, expected %d at handle", job.ProcessInstanceKey, job.ElementId,
			created.ProcessInstanceKey)
	}
	if err := expectNoJob(ctx, "go-risky", "the instance started after the risky task"); err != nil {
		return err
	}
	return complete(ctx, job.Key, nil)
}

func checkVariableRoundTrip(ctx context.Context) error {
	const document = `{"big": 9007199254740993, "negative": -42, "fraction": 3.25, "tiny": 1.5e-7,
		"text": "za\u00df \"quoted\" \\ \n 😀", "nothing": null, "yes": true,
		"list": [1, "two", [3], {"four": 4}], "nested": {"a": {"b": {"c": []}}}, "empty": {}}`
	step, err := client.NewCreateInstanceCommand().BPMNProcessId("go-noop").LatestVersion().VariablesFromString(document)
	if err != nil {
		return err
	}
	result, err := step.WithResult().Send(ctx)
	if err != nil {
		return err
	}
	decode := func(text string) (interface{}, error) {
		decoder := json.NewDecoder(strings.NewReader(text))
		decoder.UseNumber()
		var value interface{}
		err := decoder.Decode(&value)
		return value, err
	}
	want, err := decode(document)
	if err != nil {
		return err
	}
	got, err := decode(result.Variables)
	if err != nil {
		return fmt.Errorf("result variables %q: %w", result.Variables, err)
	}
	wantMap, gotMap := want.(map[string]interface{}), got.(map[string]interface{})
	for name, wantValue := range wantMap {
		if !sameJSON(wantValue, gotMap[name]) {
			return fmt.Errorf("variable %q went in as %v and came back as %v (all: %s)", name, wantValue, gotMap[name],
				result.Variables)
		}
	}
	if len(gotMap) != len(wantMap) {
		return fmt.Errorf("%d variables came back, %d went in: %s", len(gotMap), len(wantMap), result.Variables)
	}
	return nil
}

// goNumbers are the numbers checkRandomNumbers sends, in Go's own types.
type goNumbers struct {
	Doubles []float64 `json:"doubles"`
	Ints    []int64   `json:"ints"`
	Uints   []uint64  `json:"uints"`
}

// randomNumbers: doubles uniform in [0, 1) (what a user's ids and amounts look like), doubles
// of every exponent (random bit patterns), and integers beyond 2^53 up to the 64-bit limits.
func randomNumbers(rng *rand.Rand) goNumbers {
	var n goNumbers
	for len(n.Doubles) < 200 {
		n.Doubles = append(n.Doubles, rng.Float64())
	}
	for len(n.Doubles) < 300 {
		d := math.Float64frombits(rng.Uint64())
		if !math.IsNaN(d) && !math.IsInf(d, 0) {
			n.Doubles = append(n.Doubles, d)
		}
	}
	n.Ints = []int64{math.MaxInt64, math.MinInt64, 1<<53 + 1, -(1<<53 + 1), rng.Int63(), -rng.Int63()}
	n.Uints = []uint64{math.MaxUint64, 1<<63 + 1, rng.Uint64()}
	return n
}

// sameNumbers: equal in Go's types, doubles bit for bit (so -0 and 0 differ).
func sameNumbers(what string, got, want goNumbers) error {
	if len(got.Doubles) != len(want.Doubles) || len(got.Ints) != len(want.Ints) || len(got.Uints) != len(want.Uints) {
		return fmt.Errorf("%s: %d/%d/%d numbers came back, %d/%d/%d went in", what, len(got.Doubles), len(got.Ints),
			len(got.Uints), len(want.Doubles), len(want.Ints), len(want.Uints))
	}
	for i := range want.Doubles {
		if math.Float64bits(got.Doubles[i]) != math.Float64bits(want.Doubles[i]) {
			return fmt.Errorf("%s: double %d went in as %v and came back as %v", what, i, want.Doubles[i], got.Doubles[i])
		}
	}
	for i := range want.Ints {
		if got.Ints[i] != want.Ints[i] {
			return fmt.Errorf("%s: integer %d went in as %d and came back as %d", what, i, want.Ints[i], got.Ints[i])
		}
	}
	for i := range want.Uints {
		if got.Uints[i] != want.Uints[i] {
			return fmt.Errorf("%s: integer %d went in as %d and came back as %d", what, i, want.Uints[i], got.Uints[i])
		}
	}
	return nil
}

func checkRandomNumbers(ctx context.Context) error {
	seed := time.Now().UnixNano()
	sent := randomNumbers(rand.New(rand.NewSource(seed)))
	step, err := client.NewCreateInstanceCommand().BPMNProcessId("go-numbers").LatestVersion().VariablesFromObject(sent)
	if err != nil {
		return err
	}
	type answer struct {
		result *pb.CreateProcessInstanceWithResultResponse
		err    error
	}
	answers := make(chan answer, 1)
	go func() {
		result, err := step.WithResult().Send(ctx)
		answers <- answer{result, err}
	}()
	job, err := activateOne(ctx, "go-numbers-work", time.Minute)
	if err != nil {
		return err
	}
	var seen goNumbers
	if err := job.GetVariablesAs(&seen); err != nil {
		return fmt.Errorf("job variables: %w", err)
	}
	if err := sameNumbers(fmt.Sprintf("the activated job (seed %d)", seed), seen, sent); err != nil {
		return err
	}
	back := map[string]interface{}{"doublesBack": seen.Doubles, "intsBack": seen.Ints, "uintsBack": seen.Uints}
	completeStep, err := client.NewCompleteJobCommand().JobKey(job.Key).VariablesFromMap(back)
	if err != nil {
		return err
	}
	if _, err := completeStep.Send(ctx); err != nil {
		return fmt.Errorf("complete job %d: %w", job.Key, err)
	}
	got := <-answers
	if got.err != nil {
		return got.err
	}
	var result struct {
		goNumbers
		DoublesBack []float64 `json:"doublesBack"`
		IntsBack    []int64   `json:"intsBack"`
		UintsBack   []uint64  `json:"uintsBack"`
	}
	if err := json.Unmarshal([]byte(got.result.Variables), &result); err != nil {
		return fmt.Errorf("result variables: %w", err)
	}
	if err := sameNumbers(fmt.Sprintf("the instance's result (seed %d)", seed), result.goNumbers, sent); err != nil {
		return err
	}
	return sameNumbers(fmt.Sprintf("the completed job's variables in the result (seed %d)", seed),
		goNumbers{result.DoublesBack, result.IntsBack, result.UintsBack}, sent)
}

// sameJSON compares decoded JSON values; numbers by value (an integer exactly, 3.25 and
// 3.250 alike).
func sameJSON(a, b interface{}) bool {
	switch a := a.(type) {
	case json.Number:
		bn, ok := b.(json.Number)
		if !ok {
			return false
		}
		if ai, err := a.Int64(); err == nil {
			bi, err := bn.Int64()
			return err == nil && ai == bi
		}
		af, _ := a.Float64()
		bf, err := bn.Float64()
		return err == nil && af == bf
	case map[string]interface{}:
		bm, ok := b.(map[string]interface{})
		if !ok || len(a) != len(bm) {
			return false
		}
		for k, v := range a {
			if !sameJSON(v, bm[k]) {
				return false
			}
		}
		return true
	case []interface{}:
		bl, ok := b.([]interface{})
		if !ok || len(a) != len(bl) {
			return false
		}
		for i := range a {
			if !sameJSON(a[i], bl[i]) {
				return false
			}
		}
		return true
	default:
		return reflect.DeepEqual(a, b)
	}
}

func checkCreateUnknown(ctx context.Context) error {
	_, err := client.NewCreateInstanceCommand().BPMNProcessId("go-no-such-process").LatestVersion().Send(ctx)
	return expectCode(err, codes.NotFound, "go-no-such-process")
}

func checkCreateInvalidVariables(ctx context.Context) error {
	// The client checks strings it is given; an object that marshals to an array gets through.
	step, err := client.NewCreateInstanceCommand().BPMNProcessId("go-noop").LatestVersion().
		VariablesFromObject([]int{1, 2})
	if err != nil {
		return err
	}
	_, err = step.Send(ctx)
	return expectCode(err, codes.InvalidArgument, "variables")
}

// withResults creates n instances with a result, each with {"n": i}, and returns what each
// result call answered (in goroutines; collect them with wait).
type resultSet struct {
	wg      sync.WaitGroup
	mu      sync.Mutex
	results map[int]map[string]interface{}
	errs    []error
}

func createWithResults(ctx context.Context, processID string, n int) *resultSet {
	set := &resultSet{results: map[int]map[string]interface{}{}}
	for i := 1; i <= n; i++ {
		set.wg.Add(1)
		go func(i int) {
			defer set.wg.Done()
			step, err := client.NewCreateInstanceCommand().BPMNProcessId(processID).LatestVersion().
				VariablesFromMap(map[string]interface{}{"n": i})
			var vars map[string]interface{}
			if err == nil {
				var result *pb.CreateProcessInstanceWithResultResponse
				result, err = step.WithResult().Send(ctx)
				if err == nil {
					vars, err = parseVariables(result.Variables)
				}
			}
			set.mu.Lock()
			defer set.mu.Unlock()
			if err != nil {
				set.errs = append(set.errs, fmt.Errorf("instance n=%d: %w", i, err))
			} else {
				set.results[i] = vars
			}
		}(i)
	}
	return set
}

func (set *resultSet) wait() (map[int]map[string]interface{}, error) {
	set.wg.Wait()
	if len(set.errs) > 0 {
		return nil, errors.Join(set.errs...)
	}
	return set.results, nil
}

// jobRecorder is a worker handler that completes each job with {"doubled": 2n, "by": name}
// and remembers what went wrong.
type jobRecorder struct {
	mu      sync.Mutex
	name    string
	handled int
	errs    []error
}

func (r *jobRecorder) handle(jobClient worker.JobClient, job entities.Job) {
	err := func() error {
		vars, err := jobVariables(job)
		if err != nil {
			return err
		}
		headers, err := job.GetCustomHeadersAsMap()
		if err != nil {
			return err
		}
		if headers["suite"] != "go" || headers["model"] != job.BpmnProcessId {
			return fmt.Errorf("job %d: custom headers %v", job.Key, headers)
		}
		if job.ElementId != "work" || job.Retries != 3 || job.ProcessInstanceKey <= 0 || job.Deadline <= 0 ||
			job.ProcessDefinitionKey != deployed[job.BpmnProcessId] || job.ProcessDefinitionVersion != 1 ||
			job.TenantId != "<default>" || job.ElementInstanceKey <= 0 {
			return fmt.Errorf("job %d: %+v", job.Key, job.ActivatedJob)
		}
		n, _ := vars["n"].(float64)
		command, err := jobClient.NewCompleteJobCommand().JobKey(job.Key).
			VariablesFromMap(map[string]interface{}{"doubled": 2 * n, "by": r.name})
		if err != nil {
			return err
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if _, err := command.Send(ctx); err != nil {
			return fmt.Errorf("complete job %d: %w", job.Key, err)
		}
		return nil
	}()
	r.mu.Lock()
	defer r.mu.Unlock()
	r.handled++
	if err != nil {
		r.errs = append(r.errs, err)
	}
}

func (r *jobRecorder) check(results map[int]map[string]interface{}, n int) error {
	// An instance's result can arrive before its handler has noted that the completion went
	// through: give the handlers a moment.
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		r.mu.Lock()
		done := r.handled >= n
		r.mu.Unlock()
		if done {
			break
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.errs) > 0 {
		return errors.Join(r.errs...)
	}
	if r.handled != n {
		return fmt.Errorf("the handler ran %d times, expected %d", r.handled, n)
	}
	for i := 1; i <= n; i++ {
		if err := expectVariables(fmt.Sprintf("result of n=%d", i), results[i],
			map[string]interface{}{"n": i, "doubled": 2 * i, "by": r.name}); err != nil {
			return err
		}
	}
	return nil
}

func checkActivateAcrossPartitions(ctx context.Context) error {
	created := map[int64]bool{}
	partitions := map[int32]int{}
	for i := 0; i < 4; i++ {
		instance, err := createInstance(ctx, "go-batch", map[string]interface{}{"i": i, "other": "x"})
		if err != nil {
			return err
		}
		created[instance.ProcessInstanceKey] = true
		partitions[partitionOf(instance.ProcessInstanceKey)]++
	}
	if partitions[1] != 2 || partitions[2] != 2 {
		return fmt.Errorf("instances per partition %v, expected 2 and 2 (round-robin)", partitions)
	}
	// The jobs are created just after the instances: wait for them all to exist.
	time.Sleep(time.Second)
	callCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	jobs, err := client.NewActivateJobsCommand().JobType("go-batch-work").MaxJobsToActivate(10).
		Timeout(time.Minute).WorkerName("go-compat-batch").FetchVariables("i").Send(callCtx)
	if err != nil {
		return err
	}
	if len(jobs) != 4 {
		return fmt.Errorf("one activation with maxJobsToActivate 10 returned %d jobs, expected all 4", len(jobs))
	}
	for _, job := range jobs {
		if !created[job.ProcessInstanceKey] {
			return fmt.Errorf("job %d of an unknown instance %d", job.Key, job.ProcessInstanceKey)
		}
		delete(created, job.ProcessInstanceKey)
		if partitionOf(job.Key) != partitionOf(job.ProcessInstanceKey) {
			return fmt.Errorf("job %d is not on its instance's partition", job.Key)
		}
		vars, err := jobVariables(job)
		if err != nil {
			return err
		}
		if _, ok := vars["i"]; !ok || len(vars) != 1 {
			return fmt.Errorf("fetchVariables [i]: job variables %v", vars)
		}
		if err := complete(ctx, job.Key, nil); err != nil {
			return err
		}
	}
	return nil
}

func checkLongPollWakes(ctx context.Context) error {
	// Twice, so that (round-robin) a job appears on each partition while a poll waits.
	for round := 1; round <= 2; round++ {
		type answer struct {
			jobs []entities.Job
			err  error
			at   time.Time
		}
		answered := make(chan answer, 1)
		go func() {
			jobs, err := activate(ctx, "go-wake-work", 1, 8*time.Second, time.Minute)
			answered <- answer{jobs, err, time.Now()}
		}()
		time.Sleep(500 * time.Millisecond)
		created, err := createInstance(ctx, "go-wake", nil)
		if err != nil {
			return err
		}
		createdAt := time.Now()
		got := <-answered
		if got.err != nil {
			return got.err
		}
		if len(got.jobs) != 1 || got.jobs[0].ProcessInstanceKey != created.ProcessInstanceKey {
			return fmt.Errorf("round %d: the long poll answered %d jobs, expected the job of instance %d", round,
				len(got.jobs), created.ProcessInstanceKey)
		}
		if delay := got.at.Sub(createdAt); delay > 2*time.Second {
			return fmt.Errorf("round %d: the long poll answered %v after the job's instance was created (partition %d)",
				round, delay, partitionOf(created.ProcessInstanceKey))
		}
		if err := complete(ctx, got.jobs[0].Key, nil); err != nil {
			return err
		}
	}
	return nil
}

func checkPollingWorker(ctx context.Context) error {
	recorder := &jobRecorder{name: "poller"}
	jobWorker := client.NewJobWorker().JobType("go-poll-work").Handler(recorder.handle).
		Name("go-compat-poller").Timeout(time.Minute).MaxJobsActive(4).PollInterval(50 * time.Millisecond).
		RequestTimeout(time.Second).Open()
	const n = 20
	results, err := createWithResults(ctx, "go-poll", n).wait()
	jobWorker.Close()
	jobWorker.AwaitClose()
	if err != nil {
		return err
	}
	return recorder.check(results, n)
}

func checkStreamingWorker(ctx context.Context) error {
	recorder := &jobRecorder{name: "streamer"}
	// Polling is made useless (no long poll, next poll in an hour), so the job can only come
	// over StreamActivatedJobs.
	jobWorker := client.NewJobWorker().JobType("go-stream-work").Handler(recorder.handle).
		Name("go-compat-streamer").Timeout(time.Minute).PollInterval(time.Hour).
		RequestTimeout(-time.Millisecond).StreamEnabled(true).StreamRequestTimeout(time.Minute).Open()
	defer func() {
		jobWorker.Close()
		jobWorker.AwaitClose()
	}()
	// Let the worker's one initial poll come back empty and its stream open.
	time.Sleep(time.Second)
	results, err := createWithResults(ctx, "go-stream", 1).wait()
	if err != nil {
		return err
	}
	return recorder.check(results, 1)
}

func checkStreamJobsCommand(ctx context.Context) error {
	jobs := make(chan entities.Job, 4)
	streamCtx, stopStream := context.WithCancel(ctx)
	defer stopStream()
	streamDone := make(chan error, 1)
	go func() {
		streamDone <- client.NewStreamJobsCommand().JobType("go-direct-work").Consumer(jobs).
			WorkerName("go-compat-stream").Timeout(time.Minute).FetchVariables("n").Send(streamCtx)
	}()
	time.Sleep(500 * time.Millisecond)
	created, err := createInstance(ctx, "go-direct", map[string]interface{}{"n": 5, "hidden": true})
	if err != nil {
		return err
	}
	select {
	case job := <-jobs:
		if job.ProcessInstanceKey != created.ProcessInstanceKey || job.Type != "go-direct-work" ||
			job.Worker != "go-compat-stream" || job.BpmnProcessId != "go-direct" {
			return fmt.Errorf("streamed job %+v", job.ActivatedJob)
		}
		vars, err := jobVariables(job)
		if err != nil {
			return err
		}
		if len(vars) != 1 || vars["n"] != float64(5) {
			return fmt.Errorf("fetchVariables [n]: job variables %v", vars)
		}
		if err := complete(ctx, job.Key, nil); err != nil {
			return err
		}
	case err := <-streamDone:
		return fmt.Errorf("the stream ended before a job arrived: %v", err)
	case <-time.After(10 * time.Second):
		return errors.New("no job arrived on the stream within 10 s")
	}
	stopStream()
	if err := <-streamDone; status.Code(err) != codes.Canceled && err != nil {
		return fmt.Errorf("the stream ended with %v after the client cancelled it", err)
	}
	return nil
}

func checkFailWithBackoff(ctx context.Context) error {
	created, err := createInstance(ctx, "go-retry", nil)
	if err != nil {
		return err
	}
	job, err := activateOne(ctx, "go-retry-work", time.Minute)
	if err != nil {
		return err
	}
	if job.ProcessInstanceKey != created.ProcessInstanceKey {
		return fmt.Errorf("job of instance %d, expected %d", job.ProcessInstanceKey, created.ProcessInstanceKey)
	}
	// Without a back-off the job is activatable again at once.
	failWithVars, err := client.NewFailJobCommand().JobKey(job.Key).Retries(2).ErrorMessage("try again").
		VariablesFromMap(map[string]interface{}{"attempt": 1})
	if err != nil {
		return err
	}
	if _, err := failWithVars.Send(ctx); err != nil {
		return fmt.Errorf("fail without back-off: %w", err)
	}
	again, err := activateOne(ctx, "go-retry-work", time.Minute)
	if err != nil {
		return fmt.Errorf("after a failure without back-off: %w", err)
	}
	if again.Key != job.Key || again.Retries != 2 {
		return fmt.Errorf("after a failure without back-off: job %d retries %d, expected %d and 2", again.Key, again.Retries, job.Key)
	}
	vars, err := jobVariables(again)
	if err != nil {
		return err
	}
	if err := expectVariables("the variables the job failed with", vars, map[string]interface{}{"attempt": 1}); err != nil {
		return err
	}
	// With a back-off of 2 s it is not, until the back-off is over.
	failed := time.Now()
	if _, err := client.NewFailJobCommand().JobKey(job.Key).Retries(1).RetryBackoff(2 * time.Second).
		ErrorMessage("later").Send(ctx); err != nil {
		return fmt.Errorf("fail with back-off: %w", err)
	}
	if err := expectNoJob(ctx, "go-retry-work", "the job failed with a 2 s back-off"); err != nil {
		return err
	}
	later, err := activateOne(ctx, "go-retry-work", time.Minute)
	if err != nil {
		return fmt.Errorf("after the back-off: %w", err)
	}
	elapsed := time.Since(failed)
	if later.Key != job.Key || later.Retries != 1 {
		return fmt.Errorf("after the back-off: job %d retries %d, expected %d and 1", later.Key, later.Retries, job.Key)
	}
	if elapsed < 1900*time.Millisecond {
		return fmt.Errorf("activatable again %v after a failure with a 2 s back-off", elapsed)
	}
	return complete(ctx, later.Key, nil)
}

func checkIncident(ctx context.Context) error {
	if _, err := createInstance(ctx, "go-incident", nil); err != nil {
		return err
	}
	job, err := activateOne(ctx, "go-incident-work", time.Minute)
	if err != nil {
		return err
	}
	if _, err := client.NewFailJobCommand().JobKey(job.Key).Retries(0).ErrorMessage("out of luck").Send(ctx); err != nil {
		return fmt.Errorf("fail to 0 retries: %w", err)
	}
	if err := expectNoJob(ctx, "go-incident-work", "the job failed with no retries left"); err != nil {
		return err
	}
	if _, err := client.NewUpdateJobRetriesCommand().JobKey(job.Key).Retries(2).Send(ctx); err != nil {
		return fmt.Errorf("update retries: %w", err)
	}
	if err := expectNoJob(ctx, "go-incident-work", "the job's incident is not resolved yet"); err != nil {
		return err
	}
	// The gateway API has no way to look an incident up (Operate does that from exported
	// records). Zeebe's keys count up per partition, and the incident was created when the job
	// failed, so it is one of the keys after the job's; every other key answers NOT_FOUND.
	var resolved int64
	for key := job.Key + 1; key <= job.Key+64 && resolved == 0; key++ {
		_, err := client.NewResolveIncidentCommand().IncidentKey(key).Send(ctx)
		if err == nil {
			resolved = key
		} else if status.Code(err) != codes.NotFound {
			return fmt.Errorf("resolve incident %d: expected success or NOT_FOUND, got %w", key, err)
		}
	}
	if resolved == 0 {
		return fmt.Errorf("no incident among the 64 keys after job %d", job.Key)
	}
	again, err := activateOne(ctx, "go-incident-work", time.Minute)
	if err != nil {
		return fmt.Errorf("after resolving incident %d: %w", resolved, err)
	}
	if again.Key != job.Key || again.Retries != 2 {
		return fmt.Errorf("after resolving: job %d retries %d, expected %d and 2", again.Key, again.Retries, job.Key)
	}
	if _, err := client.NewResolveIncidentCommand().IncidentKey(resolved).Send(ctx); expectCode(err, codes.NotFound) != nil {
		return fmt.Errorf("resolving incident %d again: %v", resolved, expectCode(err, codes.NotFound))
	}
	return complete(ctx, again.Key, nil)
}

func checkJobInvalidArguments(ctx context.Context) error {
	if _, err := createInstance(ctx, "go-incident", nil); err != nil {
		return err
	}
	job, err := activateOne(ctx, "go-incident-work", time.Minute)
	if err != nil {
		return err
	}
	_, err = client.NewUpdateJobRetriesCommand().JobKey(job.Key).Retries(0).Send(ctx)
	if err := expectCode(err, codes.InvalidArgument, "retries"); err != nil {
		return fmt.Errorf("update retries to 0: %w", err)
	}
	_, err = client.NewUpdateJobRetriesCommand().JobKey(job.Key).Retries(-3).Send(ctx)
	if err := expectCode(err, codes.InvalidArgument, "retries"); err != nil {
		return fmt.Errorf("update retries to -3: %w", err)
	}
	completion, err := client.NewCompleteJobCommand().JobKey(job.Key).VariablesFromObject([]int{1})
	if err != nil {
		return err
	}
	_, err = completion.Send(ctx)
	if err := expectCode(err, codes.InvalidArgument, "variables"); err != nil {
		return fmt.Errorf("complete with an array as variables: %w", err)
	}
	thrown, err := client.NewThrowErrorCommand().JobKey(job.Key).ErrorCode("GO-E42").VariablesFromObject("text")
	if err != nil {
		return err
	}
	_, err = thrown.Send(ctx)
	if err := expectCode(err, codes.InvalidArgument, "variables"); err != nil {
		return fmt.Errorf("throw an error with a string as variables: %w", err)
	}
	// Still active after all that: complete it properly.
	return complete(ctx, job.Key, map[string]interface{}{"fine": true})
}

func checkThrowError(ctx context.Context) error {
	created, err := createInstance(ctx, "go-error", map[string]interface{}{"order": "o-1"})
	if err != nil {
		return err
	}
	job, err := activateOne(ctx, "go-risky", time.Minute)
	if err != nil {
		return err
	}
	command, err := client.NewThrowErrorCommand().JobKey(job.Key).ErrorCode("GO-E42").
		ErrorMessage("out of stock").VariablesFromMap(map[string]interface{}{"reason": "stock"})
	if err != nil {
		return err
	}
	if _, err := command.Send(ctx); err != nil {
		return fmt.Errorf("throw error: %w", err)
	}
	handler, err := activateOne(ctx, "go-after-error", time.Minute)
	if err != nil {
		return fmt.Errorf("after the error: %w", err)
	}
	if handler.ProcessInstanceKey != created.ProcessInstanceKey || handler.ElementId != "handle" {
		return fmt.Errorf("after the error: job of instance %d at %q, expected %d at handle",
			handler.ProcessInstanceKey, handler.ElementId, created.ProcessInstanceKey)
	}
	vars, err := jobVariables(handler)
	if err != nil {
		return err
	}
	if err := expectVariables("after the error", vars, map[string]interface{}{"reason": "stock", "order": "o-1"}); err != nil {
		return err
	}
	// The risky job is gone with its task.
	if _, err := client.NewCompleteJobCommand().JobKey(job.Key).Send(ctx); expectCode(err, codes.NotFound) != nil {
		return fmt.Errorf("completing the job that threw: %v", expectCode(err, codes.NotFound))
	}
	return complete(ctx, handler.Key, nil)
}

func checkUpdateTimeout(ctx context.Context) error {
	if _, err := createInstance(ctx, "go-timeout", nil); err != nil {
		return err
	}
	job, err := activateOne(ctx, "go-timeout-work", 10*time.Minute)
	if err != nil {
		return err
	}
	if remaining := time.Until(time.UnixMilli(job.Deadline)); remaining < 9*time.Minute {
		return fmt.Errorf("deadline %v away, expected about 10 minutes", remaining)
	}
	shortened := time.Now()
	if _, err := client.NewUpdateJobTimeoutCommand().JobKey(job.Key).Timeout(1000).Send(ctx); err != nil {
		return fmt.Errorf("update the timeout: %w", err)
	}
	again, err := activateOne(ctx, "go-timeout-work", time.Minute)
	if err != nil {
		return fmt.Errorf("after shortening the timeout to 1 s: %w", err)
	}
	if again.Key != job.Key {
		return fmt.Errorf("job %d, expected %d to time out and come back", again.Key, job.Key)
	}
	if elapsed := time.Since(shortened); elapsed < 800*time.Millisecond {
		return fmt.Errorf("the job came back %v after its timeout was set to 1 s", elapsed)
	}
	return complete(ctx, again.Key, nil)
}

func checkSetVariables(ctx context.Context) error {
	results := createWithResults(ctx, "go-vars", 1)
	job, err := activateOne(ctx, "go-vars-work", time.Minute)
	if err != nil {
		return err
	}
	local, err := client.NewSetVariablesCommand().ElementInstanceKey(job.ElementInstanceKey).
		VariablesFromMap(map[string]interface{}{"taskOnly": "local"})
	if err != nil {
		return err
	}
	localResponse, err := local.Local(true).Send(ctx)
	if err != nil {
		return fmt.Errorf("set local variables on the task: %w", err)
	}
	global, err := client.NewSetVariablesCommand().ElementInstanceKey(job.ProcessInstanceKey).
		VariablesFromString(`{"shared": {"x": 1}, "n": 10}`)
	if err != nil {
		return err
	}
	globalResponse, err := global.Send(ctx)
	if err != nil {
		return fmt.Errorf("set variables on the instance: %w", err)
	}
	if localResponse.Key <= 0 || globalResponse.Key <= 0 || localResponse.Key == globalResponse.Key {
		return fmt.Errorf("response keys %d and %d", localResponse.Key, globalResponse.Key)
	}
	// Not local on the task: the variable exists nowhere above it, so it lands at the top.
	propagated, err := client.NewSetVariablesCommand().ElementInstanceKey(job.ElementInstanceKey).
		VariablesFromMap(map[string]interface{}{"fromTask": true})
	if err != nil {
		return err
	}
	if _, err := propagated.Local(false).Send(ctx); err != nil {
		return fmt.Errorf("set non-local variables on the task: %w", err)
	}
	// An activated job carries the variables of its activation: fail it to see them anew.
	if _, err := client.NewFailJobCommand().JobKey(job.Key).Retries(3).Send(ctx); err != nil {
		return err
	}
	again, err := activateOne(ctx, "go-vars-work", time.Minute)
	if err != nil {
		return err
	}
	vars, err := jobVariables(again)
	if err != nil {
		return err
	}
	if err := expectVariables("the job", vars, map[string]interface{}{"taskOnly": "local",
		"shared": map[string]interface{}{"x": 1}, "n": 10, "fromTask": true}); err != nil {
		return err
	}
	if err := complete(ctx, again.Key, nil); err != nil {
		return err
	}
	done, err := results.wait()
	if err != nil {
		return err
	}
	result := done[1]
	if err := expectVariables("the instance result", result, map[string]interface{}{
		"shared": map[string]interface{}{"x": 1}, "n": 10, "fromTask": true}); err != nil {
		return err
	}
	if _, ok := result["taskOnly"]; ok {
		return fmt.Errorf("the task's local variable reached the process scope: %v", result)
	}
	// Variables that are not a JSON object are refused.
	invalid, err := client.NewSetVariablesCommand().ElementInstanceKey(job.ProcessInstanceKey).
		VariablesFromObject([]string{"a"})
	if err != nil {
		return err
	}
	_, err = invalid.Send(ctx)
	if err := expectCode(err, codes.InvalidArgument, "variables"); err != nil {
		return fmt.Errorf("set variables to an array: %w", err)
	}
	return nil
}

func checkCancel(ctx context.Context) error {
	created, err := createInstance(ctx, "go-cancel", nil)
	if err != nil {
		return err
	}
	// Wait for its job, so the instance is inside its task when cancelled.
	job, err := activateOne(ctx, "go-cancel-work", time.Minute)
	if err != nil {
		return err
	}
	if _, err := client.NewCancelInstanceCommand().ProcessInstanceKey(created.ProcessInstanceKey).Send(ctx); err != nil {
		return fmt.Errorf("cancel: %w", err)
	}
	_, err = client.NewCancelInstanceCommand().ProcessInstanceKey(created.ProcessInstanceKey).Send(ctx)
	if err := expectCode(err, codes.NotFound, fmt.Sprint(created.ProcessInstanceKey)); err != nil {
		return fmt.Errorf("cancel again: %w", err)
	}
	_, err = client.NewCompleteJobCommand().JobKey(job.Key).Send(ctx)
	if err := expectCode(err, codes.NotFound); err != nil {
		return fmt.Errorf("completing the job of the cancelled instance: %w", err)
	}
	return nil
}

// subscriptionPartition is the partition Zeebe routes a correlation key to: Java's
// String.hashCode recurrence over the UTF-8 bytes read as signed bytes, then |hash % n| + 1.
func subscriptionPartition(correlationKey string, partitions int32) int32 {
	var hash int32
	for _, b := range []byte(correlationKey) {
		hash = 31*hash + int32(int8(b))
	}
	remainder := hash % partitions
	if remainder < 0 {
		remainder = -remainder
	}
	return remainder + 1
}

func partitionOf(key int64) int32 { return int32(key >> 51) }

func checkMessage(ctx context.Context) error {
	// Two instances waiting for messages whose correlation keys both hash to partition 2: new
	// instances go round-robin, so one of them waits on partition 1 and its message crosses over.
	var orderIDs []string
	for i := 0; len(orderIDs) < 2; i++ {
		if id := fmt.Sprintf("order-%s-%d", runID, i); subscriptionPartition(id, 2) == 2 {
			orderIDs = append(orderIDs, id)
		}
	}
	instances := map[int64]string{}
	crossed := false
	for _, orderID := range orderIDs {
		created, err := createInstance(ctx, "go-message", map[string]interface{}{"orderId": orderID})
		if err != nil {
			return err
		}
		instances[created.ProcessInstanceKey] = orderID
		if partitionOf(created.ProcessInstanceKey) != 2 {
			crossed = true
		}
	}
	if !crossed {
		return fmt.Errorf("both instances were created on partition 2 (keys %v); expected round-robin", instances)
	}
	for _, orderID := range orderIDs {
		publish := func() (*pb.PublishMessageResponse, error) {
			command, err := client.NewPublishMessageCommand().MessageName("go-paid").CorrelationKey(orderID).
				MessageId("payment-" + orderID).TimeToLive(time.Minute).
				VariablesFromMap(map[string]interface{}{"amount": 42.5, "paidFor": orderID})
			if err != nil {
				return nil, err
			}
			return command.Send(ctx)
		}
		published, err := publish()
		if err != nil {
			return fmt.Errorf("publish: %w", err)
		}
		if published.Key <= 0 || partitionOf(published.Key) != 2 || published.TenantId != "<default>" {
			return fmt.Errorf("publish response %+v (expected a key of partition 2)", published)
		}
		_, err = publish()
		if err := expectCode(err, codes.AlreadyExists, "payment-"+orderID); err != nil {
			return fmt.Errorf("the same message id again: %w", err)
		}
	}
	for range orderIDs {
		job, err := activateOne(ctx, "go-after-message", time.Minute)
		if err != nil {
			return fmt.Errorf("after the message: %w", err)
		}
		orderID, ok := instances[job.ProcessInstanceKey]
		if !ok {
			return fmt.Errorf("job of instance %d, expected one of %v", job.ProcessInstanceKey, instances)
		}
		delete(instances, job.ProcessInstanceKey)
		vars, err := jobVariables(job)
		if err != nil {
			return err
		}
		if err := expectVariables("after the message", vars, map[string]interface{}{
			"amount": 42.5, "orderId": orderID, "paidFor": orderID}); err != nil {
			return err
		}
		if err := complete(ctx, job.Key, nil); err != nil {
			return err
		}
	}
	return nil
}

func checkBufferedMessage(ctx context.Context) error {
	orderID := "early-" + runID
	command, err := client.NewPublishMessageCommand().MessageName("go-paid").CorrelationKey(orderID).
		TimeToLive(time.Minute).VariablesFromMap(map[string]interface{}{"early": true})
	if err != nil {
		return err
	}
	if _, err := command.Send(ctx); err != nil {
		return fmt.Errorf("publish: %w", err)
	}
	created, err := createInstance(ctx, "go-message", map[string]interface{}{"orderId": orderID})
	if err != nil {
		return err
	}
	job, err := activateOne(ctx, "go-after-message", time.Minute)
	if err != nil {
		return fmt.Errorf("the instance created after the message: %w", err)
	}
	if job.ProcessInstanceKey != created.ProcessInstanceKey {
		return fmt.Errorf("job of instance %d, expected %d", job.ProcessInstanceKey, created.ProcessInstanceKey)
	}
	vars, err := jobVariables(job)
	if err != nil {
		return err
	}
	if err := expectVariables("after the buffered message", vars, map[string]interface{}{"early": true}); err != nil {
		return err
	}
	return complete(ctx, job.Key, nil)
}

func checkSignalCatch(ctx context.Context) error {
	created, err := createInstance(ctx, "go-signal-catch", nil)
	if err != nil {
		return err
	}
	// A signal reaches only subscriptions that exist when it is broadcast, and the instance
	// opens its subscription just after its creation is answered: broadcast until it is caught.
	for attempt := 1; attempt <= 10; attempt++ {
		command, err := client.NewBroadcastSignalCommand().SignalName("go-ping").
			VariablesFromMap(map[string]interface{}{"pinged": attempt})
		if err != nil {
			return err
		}
		response, err := command.Send(ctx)
		if err != nil {
			return fmt.Errorf("broadcast: %w", err)
		}
		if response.Key <= 0 || response.TenantId != "<default>" {
			return fmt.Errorf("broadcast response %+v", response)
		}
		jobs, err := activate(ctx, "go-after-ping", 1, time.Second, time.Minute)
		if err != nil {
			return err
		}
		if len(jobs) == 1 {
			if jobs[0].ProcessInstanceKey != created.ProcessInstanceKey {
				return fmt.Errorf("job of instance %d, expected %d", jobs[0].ProcessInstanceKey, created.ProcessInstanceKey)
			}
			vars, err := jobVariables(jobs[0])
			if err != nil {
				return err
			}
			if err := expectVariables("after the signal", vars, map[string]interface{}{"pinged": attempt}); err != nil {
				return err
			}
			return complete(ctx, jobs[0].Key, nil)
		}
	}
	return errors.New("10 broadcasts of go-ping, and the waiting instance never caught one")
}

func checkSignalStart(ctx context.Context) error {
	command, err := client.NewBroadcastSignalCommand().SignalName("go-start").
		VariablesFromMap(map[string]interface{}{"greeting": "hello"})
	if err != nil {
		return err
	}
	if _, err := command.Send(ctx); err != nil {
		return fmt.Errorf("broadcast: %w", err)
	}
	job, err := activateOne(ctx, "go-after-start-signal", time.Minute)
	if err != nil {
		return err
	}
	if job.BpmnProcessId != "go-signal-start" {
		return fmt.Errorf("job of process %q", job.BpmnProcessId)
	}
	vars, err := jobVariables(job)
	if err != nil {
		return err
	}
	if err := expectVariables("the started instance", vars, map[string]interface{}{"greeting": "hello"}); err != nil {
		return err
	}
	if err := complete(ctx, job.Key, nil); err != nil {
		return err
	}
	// One broadcast, one instance (however many partitions the signal visits).
	time.Sleep(500 * time.Millisecond)
	return expectNoJob(ctx, "go-after-start-signal", "one broadcast should start one instance")
}

func checkEvaluateDecision(ctx context.Context) error {
	byID, err := client.NewEvaluateDecisionCommand().DecisionId("go-dish").
		VariablesFromMap(map[string]interface{}{"season": "Summer"})
	if err != nil {
		return err
	}
	response, err := byID.Send(ctx)
	if err != nil {
		return fmt.Errorf("by id: %w", err)
	}
	if response.DecisionId != "go-dish" || response.DecisionName != "Dish by season" || response.DecisionVersion != 1 ||
		response.DecisionKey != dishDecisionKey || response.DecisionRequirementsId != "go-dishes" ||
		response.DecisionOutput != `"Salad"` || response.FailedDecisionId != "" || response.FailureMessage != "" {
		return fmt.Errorf("by id: %+v", response)
	}
	if len(response.EvaluatedDecisions) != 1 {
		return fmt.Errorf("%d evaluated decisions, expected 1", len(response.EvaluatedDecisions))
	}
	evaluated := response.EvaluatedDecisions[0]
	if evaluated.DecisionId != "go-dish" || evaluated.DecisionType != "DECISION_TABLE" || evaluated.DecisionOutput != `"Salad"` ||
		len(evaluated.MatchedRules) != 1 || evaluated.MatchedRules[0].RuleId != "summer" || evaluated.MatchedRules[0].RuleIndex != 2 ||
		len(evaluated.EvaluatedInputs) != 1 || evaluated.EvaluatedInputs[0].InputValue != `"Summer"` {
		return fmt.Errorf("evaluated decision %+v", evaluated)
	}
	byKey, err := client.NewEvaluateDecisionCommand().DecisionKey(dishDecisionKey).
		VariablesFromString(`{"season": "Spring"}`)
	if err != nil {
		return err
	}
	response, err = byKey.Send(ctx)
	if err != nil {
		return fmt.Errorf("by key: %w", err)
	}
	if response.DecisionOutput != `"Soup"` || response.DecisionId != "go-dish" {
		return fmt.Errorf("by key: %+v", response)
	}
	return nil
}

func checkEvaluateUnknown(ctx context.Context) error {
	_, err := client.NewEvaluateDecisionCommand().DecisionId("go-no-such-decision").Send(ctx)
	return expectCode(err, codes.NotFound, "go-no-such-decision")
}

func checkOtherInvalidVariables(ctx context.Context) error {
	publish, err := client.NewPublishMessageCommand().MessageName("go-paid").CorrelationKey("nobody").
		VariablesFromObject([]int{1})
	if err != nil {
		return err
	}
	_, err = publish.Send(ctx)
	if err := expectCode(err, codes.InvalidArgument, "variables"); err != nil {
		return fmt.Errorf("publish: %w", err)
	}
	signal, err := client.NewBroadcastSignalCommand().SignalName("go-nobody").VariablesFromObject(7)
	if err != nil {
		return err
	}
	_, err = signal.Send(ctx)
	if err := expectCode(err, codes.InvalidArgument, "variables"); err != nil {
		return fmt.Errorf("broadcast: %w", err)
	}
	decision, err := client.NewEvaluateDecisionCommand().DecisionId("go-dish").VariablesFromObject([]string{"Summer"})
	if err != nil {
		return err
	}
	_, err = decision.Send(ctx)
	if err := expectCode(err, codes.InvalidArgument, "variables"); err != nil {
		return fmt.Errorf("evaluate decision: %w", err)
	}
	return nil
}

func checkBusinessRuleTask(ctx context.Context) error {
	step, err := client.NewCreateInstanceCommand().BPMNProcessId("go-decide").LatestVersion().
		VariablesFromMap(map[string]interface{}{"season": "Winter"})
	if err != nil {
		return err
	}
	result, err := step.WithResult().Send(ctx)
	if err != nil {
		return err
	}
	vars, err := parseVariables(result.Variables)
	if err != nil {
		return err
	}
	return expectVariables("result", vars, map[string]interface{}{"meal": "Stew", "season": "Winter"})
}

func checkUnknownKeys(ctx context.Context) error {
	// Keys of partition 1 and 2 that were never handed out, and one of a partition this cluster
	// does not have.
	unknown := []int64{1<<51 + 999_999, 2<<51 + 999_999, 3<<51 + 1}
	for _, key := range unknown {
		calls := map[string]error{}
		_, calls["complete job"] = client.NewCompleteJobCommand().JobKey(key).Send(ctx)
		_, calls["fail job"] = client.NewFailJobCommand().JobKey(key).Retries(1).Send(ctx)
		_, calls["update retries"] = client.NewUpdateJobRetriesCommand().JobKey(key).Retries(1).Send(ctx)
		_, calls["update timeout"] = client.NewUpdateJobTimeoutCommand().JobKey(key).Timeout(1000).Send(ctx)
		if command, err := client.NewThrowErrorCommand().JobKey(key).ErrorCode("x").VariablesFromString(`{}`); err == nil {
			_, calls["throw error"] = command.Send(ctx)
		}
		if command, err := client.NewSetVariablesCommand().ElementInstanceKey(key).VariablesFromString(`{"a": 1}`); err == nil {
			_, calls["set variables"] = command.Send(ctx)
		}
		_, calls["resolve incident"] = client.NewResolveIncidentCommand().IncidentKey(key).Send(ctx)
		_, calls["cancel instance"] = client.NewCancelInstanceCommand().ProcessInstanceKey(key).Send(ctx)
		var names []string
		for name := range calls {
			names = append(names, name)
		}
		sort.Strings(names)
		for _, name := range names {
			if err := expectCode(calls[name], codes.NotFound); err != nil {
				return fmt.Errorf("%s with key %d: %w", name, key, err)
			}
		}
	}
	return nil
}
