// Package deploy holds tokscope's container build and Kubernetes manifests; this test keeps
// them honest: every manifest decodes strictly against the Kubernetes API types (a misspelt
// field fails), the manifests agree with each other and with tokscope's flags, and the
// Dockerfile keeps its essentials (it cannot be built on a machine without a Docker engine).
package deploy

import (
	"bytes"
	"debug/elf"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"tokscope/cli"
)

// kinds are the API types a manifest here may be, by apiVersion and kind.
var kinds = map[string]func() any{
	"v1/PersistentVolumeClaim": func() any { return &corev1.PersistentVolumeClaim{} },
	"v1/Pod":                   func() any { return &corev1.Pod{} },
	"v1/Service":               func() any { return &corev1.Service{} },
	"batch/v1/Job":             func() any { return &batchv1.Job{} },
	"apps/v1/Deployment":       func() any { return &appsv1.Deployment{} },
}

// decode decodes every document of a YAML stream strictly into its API type: an unknown or
// misspelt field, a duplicate key or a value of the wrong type is an error.
func decode(data []byte) ([]any, error) {
	var objs []any
	for i, doc := range regexp.MustCompile(`(?m)^---\s*$`).Split(string(data), -1) {
		if strings.TrimSpace(stripComments(doc)) == "" {
			continue
		}
		var meta struct {
			APIVersion string `json:"apiVersion"`
			Kind       string `json:"kind"`
		}
		if err := yaml.Unmarshal([]byte(doc), &meta); err != nil {
			return nil, fmt.Errorf("document %d: %w", i+1, err)
		}
		newObj, ok := kinds[meta.APIVersion+"/"+meta.Kind]
		if !ok {
			return nil, fmt.Errorf("document %d: %s %s is not a kind this test knows: add its type to kinds", i+1, meta.APIVersion, meta.Kind)
		}
		obj := newObj()
		if err := yaml.UnmarshalStrict([]byte(doc), obj); err != nil {
			return nil, fmt.Errorf("document %d (%s): %w", i+1, meta.Kind, err)
		}
		objs = append(objs, obj)
	}
	if len(objs) == 0 {
		return nil, errors.New("no document")
	}
	return objs, nil
}

func stripComments(doc string) string {
	var b strings.Builder
	for line := range strings.Lines(doc) {
		if !strings.HasPrefix(strings.TrimSpace(line), "#") {
			b.WriteString(line)
		}
	}
	return b.String()
}

// manifests decodes every .yaml file under k8s/, by path.
func manifests(t *testing.T) map[string][]any {
	t.Helper()
	out := map[string][]any{}
	err := filepath.WalkDir("k8s", func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if ext := filepath.Ext(path); ext != ".yaml" && ext != ".yml" {
			return fmt.Errorf("%s: not a .yaml manifest (the test decodes every file here)", path)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		objs, err := decode(data)
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		out[path] = objs
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(out) < 5 {
		t.Fatalf("decoded %d manifests, want the PVC, shard Job, merge Job, reader Pod and monitor", len(out))
	}
	return out
}

func TestManifestsDecodeStrictly(t *testing.T) {
	for path, objs := range manifests(t) {
		t.Logf("%s: %d objects", path, len(objs))
	}
}

// TestMisspeltFieldFails proves the decoding is strict: the real manifests with one field
// misspelt, at the top and deep in a pod template, and with a value of the wrong type, fail.
func TestMisspeltFieldFails(t *testing.T) {
	job, err := os.ReadFile("k8s/shards/shards-job.yaml")
	if err != nil {
		t.Fatal(err)
	}
	monitor, err := os.ReadFile("k8s/monitor/monitor.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name      string
		data      []byte
		from, to  string
		wantInErr string
	}{
		{"top-level spec field", job, "completionMode:", "completionMod:", "completionMod"},
		{"container field", job, "imagePullPolicy:", "imagePulPolicy:", "imagePulPolicy"},
		{"second document", monitor, "targetPort:", "targetPortt:", "targetPortt"},
		{"wrong type", job, "completions: 4", "completions: four", "completions"},
	} {
		if _, err := decode(c.data); err != nil {
			t.Fatalf("%s: the manifest itself does not decode: %v", c.name, err)
		}
		bad := bytes.Replace(c.data, []byte(c.from), []byte(c.to), 1)
		if bytes.Equal(bad, c.data) {
			t.Fatalf("%s: %q not in the manifest", c.name, c.from)
		}
		_, err := decode(bad)
		if err == nil || !strings.Contains(err.Error(), c.wantInErr) {
			t.Errorf("%s: %q → %q decoded with error %v, want an error naming %s", c.name, c.from, c.to, err, c.wantInErr)
		}
	}
}

func only[T any](t *testing.T, objs []any) *T {
	t.Helper()
	var found []*T
	for _, o := range objs {
		if v, ok := o.(*T); ok {
			found = append(found, v)
		}
	}
	if len(found) != 1 {
		t.Fatalf("%d objects of type %T, want 1", len(found), new(T))
	}
	return found[0]
}

func envValue(c corev1.Container, name string) (corev1.EnvVar, bool) {
	i := slices.IndexFunc(c.Env, func(e corev1.EnvVar) bool { return e.Name == name })
	if i < 0 {
		return corev1.EnvVar{}, false
	}
	return c.Env[i], true
}

// TestShardJob: an Indexed Job whose shard count is its completions, each pod recording to
// its own file on the shared volume and pushing OTLP; the merge Job replays that volume.
func TestShardJob(t *testing.T) {
	m := manifests(t)
	job := only[batchv1.Job](t, m["k8s/shards/shards-job.yaml"])
	if job.Spec.CompletionMode == nil || *job.Spec.CompletionMode != batchv1.IndexedCompletion {
		t.Fatal("the shard Job is not an Indexed Job")
	}
	c := job.Spec.Template.Spec.Containers[0]
	shards, ok := envValue(c, "TOKSCOPE_SHARDS")
	if !ok || job.Spec.Completions == nil || shards.Value != fmt.Sprint(*job.Spec.Completions) {
		t.Errorf("TOKSCOPE_SHARDS %q, completions %v: they must be equal", shards.Value, job.Spec.Completions)
	}
	if job.Spec.Parallelism == nil || *job.Spec.Parallelism != *job.Spec.Completions {
		t.Error("parallelism differs from completions: the shards would not run together")
	}
	idx, ok := envValue(c, "JOB_COMPLETION_INDEX")
	if !ok || idx.ValueFrom == nil || idx.ValueFrom.FieldRef == nil ||
		idx.ValueFrom.FieldRef.FieldPath != "metadata.annotations['batch.kubernetes.io/job-completion-index']" {
		t.Error("JOB_COMPLETION_INDEX is not taken from the completion-index annotation")
	}
	if job.Spec.Template.Spec.RestartPolicy != corev1.RestartPolicyNever {
		t.Error("a shard restarted in place would append its requests to its record twice")
	}
	args := strings.Join(c.Args, " ")
	for _, want := range []string{"--record=/records/shard-$(JOB_COMPLETION_INDEX).jsonl", "--otlp=http", "--no-tui"} {
		if !strings.Contains(args, want) {
			t.Errorf("shard args %q lack %q", args, want)
		}
	}
	checkMount(t, c, "/records", "tokscope-records", job.Spec.Template.Spec)

	merge := only[batchv1.Job](t, m["k8s/shards/merge-job.yaml"])
	mc := merge.Spec.Template.Spec.Containers[0]
	if len(mc.Args) == 0 || mc.Args[0] != "replay" || mc.Args[len(mc.Args)-1] != "/records/" || !slices.Contains(mc.Args, "--no-tui") {
		t.Errorf("merge args %v do not replay the records directory headless", mc.Args)
	}
	checkMount(t, mc, "/records", "tokscope-records", merge.Spec.Template.Spec)
	pvc := only[corev1.PersistentVolumeClaim](t, m["k8s/shards/records-pvc.yaml"])
	if pvc.Name != "tokscope-records" {
		t.Errorf("the PVC is %q", pvc.Name)
	}
}

// checkMount: the container mounts at path the volume backed by the named claim.
func checkMount(t *testing.T, c corev1.Container, path, claim string, pod corev1.PodSpec) {
	t.Helper()
	i := slices.IndexFunc(c.VolumeMounts, func(v corev1.VolumeMount) bool { return v.MountPath == path })
	if i < 0 {
		t.Fatalf("%s mounts nothing at %s", c.Name, path)
	}
	j := slices.IndexFunc(pod.Volumes, func(v corev1.Volume) bool { return v.Name == c.VolumeMounts[i].Name })
	if j < 0 || pod.Volumes[j].PersistentVolumeClaim == nil || pod.Volumes[j].PersistentVolumeClaim.ClaimName != claim {
		t.Errorf("%s's %s is not the claim %s", c.Name, path, claim)
	}
}

// TestMonitor: the Deployment's metrics port is the one tokscope listens on, the one the
// scrape annotations name, and the one the Service selects the pods by.
func TestMonitor(t *testing.T) {
	objs := manifests(t)["k8s/monitor/monitor.yaml"]
	dep := only[appsv1.Deployment](t, objs)
	svc := only[corev1.Service](t, objs)
	tmpl := dep.Spec.Template
	c := tmpl.Spec.Containers[0]
	if !slices.Contains(c.Args, "--metrics-listen=0.0.0.0:9464") {
		t.Errorf("args %v: the exporter must listen on all addresses of the pod, port 9464", c.Args)
	}
	if len(c.Ports) != 1 || c.Ports[0].ContainerPort != 9464 || c.Ports[0].Name != "metrics" {
		t.Errorf("container ports %v", c.Ports)
	}
	for _, ann := range []map[string]string{tmpl.Annotations, svc.Annotations} {
		if ann["prometheus.io/scrape"] != "true" || ann["prometheus.io/port"] != "9464" || ann["prometheus.io/path"] != "/metrics" {
			t.Errorf("scrape annotations %v", ann)
		}
	}
	for k, v := range svc.Spec.Selector {
		if tmpl.Labels[k] != v || dep.Spec.Selector.MatchLabels[k] != v {
			t.Errorf("the Service selects %s=%s, which the pods do not carry", k, v)
		}
	}
	if len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].TargetPort.String() != "metrics" {
		t.Errorf("service ports %v", svc.Spec.Ports)
	}
}

// podSpec is the pod a Job, Deployment or Pod runs; nil for other objects.
func podSpec(o any) *corev1.PodSpec {
	switch v := o.(type) {
	case *batchv1.Job:
		return &v.Spec.Template.Spec
	case *appsv1.Deployment:
		return &v.Spec.Template.Spec
	case *corev1.Pod:
		return &v.Spec
	}
	return nil
}

// TestPodsRunLocked: every pod runs as non-root, without privilege escalation, capabilities
// or a writable root filesystem; tokscope's image is the same everywhere.
func TestPodsRunLocked(t *testing.T) {
	images := map[string]bool{}
	for path, objs := range manifests(t) {
		for _, o := range objs {
			spec := podSpec(o)
			if spec == nil {
				continue
			}
			if sc := spec.SecurityContext; sc == nil || sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot || sc.RunAsUser == nil || *sc.RunAsUser == 0 {
				t.Errorf("%s: the pod may run as root", path)
			}
			for _, c := range spec.Containers {
				sc := c.SecurityContext
				if sc == nil || sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation ||
					sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem ||
					sc.Capabilities == nil || !slices.Contains(sc.Capabilities.Drop, "ALL") {
					t.Errorf("%s: container %s is not locked down", path, c.Name)
				}
				if c.Name == "tokscope" {
					images[c.Image] = true
				}
			}
		}
	}
	if len(images) != 1 {
		t.Errorf("tokscope images %v, want one", images)
	}
}

// TestManifestFlagsExist: every flag a manifest gives tokscope is one it has (the --help of
// the command it runs: the measuring run's, or a command's such as replay), so a renamed flag
// or command cannot leave a manifest behind. Words that are not flags are a command's own
// (replay's files), never the measuring run's.
func TestManifestFlagsExist(t *testing.T) {
	flagsOf := func(args ...string) map[string]bool {
		var stdout, stderr bytes.Buffer
		code := cli.Main("", append(args, "--help"), &stdout, &stderr)
		known := map[string]bool{}
		for _, m := range regexp.MustCompile(`--([a-z][a-z0-9-]*)`).FindAllStringSubmatch(stdout.String(), -1) {
			known[m[1]] = true
		}
		if code != cli.ExitOK || !known["no-tui"] {
			t.Fatalf("tokscope %v --help: exit %d, no flags listed:\n%s%s", args, code, stdout.String(), stderr.String())
		}
		return known
	}
	if run := flagsOf(); !run["otlp"] || !run["record"] {
		t.Fatalf("--help does not list the run's flags")
	}
	for path, objs := range manifests(t) {
		for _, o := range objs {
			spec := podSpec(o)
			if _, reader := o.(*corev1.Pod); spec == nil || reader { // the records reader runs no tokscope
				continue
			}
			args := spec.Containers[0].Args
			var command []string
			if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
				command, args = args[:1], args[1:]
			}
			known := flagsOf(command...)
			for _, arg := range args {
				name, _, _ := strings.Cut(strings.TrimPrefix(arg, "--"), "=")
				switch {
				case !strings.HasPrefix(arg, "--") && command == nil:
					t.Errorf("%s: argument %q is not a flag of the measuring run (write flags as --name=value)", path, arg)
				case strings.HasPrefix(arg, "--") && !known[name]:
					t.Errorf("%s: %q is not a flag of tokscope %v", path, arg, command)
				}
			}
		}
	}
}

// TestDockerfile checks what the image promises, since no Docker engine builds it here: a
// multi-stage build, a static binary (CGO_ENABLED=0), a final stage on distroless/static or
// scratch that runs no shell (no RUN at all, an exec-form ENTRYPOINT) as a non-root USER.
func TestDockerfile(t *testing.T) {
	data, err := os.ReadFile("Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	stages := dockerStages(string(data))
	if len(stages) < 2 {
		t.Fatalf("%d stages, want a build stage and a final one", len(stages))
	}
	build, final := strings.Join(stages[0], "\n"), stages[len(stages)-1]
	if !regexp.MustCompile(`(?m)^RUN .*CGO_ENABLED=0 .*go build`).MatchString(build) {
		t.Error("the build stage does not build with CGO_ENABLED=0")
	}
	from := final[0]
	if !strings.Contains(from, "distroless/static") && !strings.HasSuffix(from, " scratch") {
		t.Errorf("final stage %q: want distroless/static or scratch", from)
	}
	user, entry := "", ""
	for _, ins := range final {
		word, rest, _ := strings.Cut(ins, " ")
		switch strings.ToUpper(word) {
		case "RUN":
			t.Errorf("the final stage runs %q: it has no shell, and must not need one", ins)
		case "USER":
			user = rest
		case "ENTRYPOINT", "CMD":
			if !strings.HasPrefix(strings.TrimSpace(rest), "[") {
				t.Errorf("%s in shell form: %q", word, ins)
			}
			entry = rest
		case "COPY":
			if !strings.Contains(rest, "--from=") {
				t.Errorf("the final stage copies %q from the context, not from the build stage", rest)
			}
		}
	}
	if u, _, _ := strings.Cut(user, ":"); u == "" || u == "root" || u == "0" {
		t.Errorf("USER %q: want a non-root user", user)
	}
	if !strings.Contains(entry, "tokscope") {
		t.Errorf("ENTRYPOINT %q does not run tokscope", entry)
	}
}

// dockerStages splits a Dockerfile into stages, each a list of instructions (continuation
// lines joined, comments dropped), the first being its FROM.
func dockerStages(src string) [][]string {
	var stages [][]string
	var cur strings.Builder
	flush := func() {
		ins := strings.Join(strings.Fields(cur.String()), " ")
		cur.Reset()
		if ins == "" {
			return
		}
		if strings.HasPrefix(strings.ToUpper(ins), "FROM ") {
			stages = append(stages, nil)
		}
		if len(stages) > 0 {
			stages[len(stages)-1] = append(stages[len(stages)-1], ins)
		}
	}
	for line := range strings.Lines(src) {
		line = strings.TrimRight(line, "\r\n")
		if strings.HasPrefix(strings.TrimSpace(line), "#") {
			continue
		}
		if strings.HasSuffix(line, "\\") {
			cur.WriteString(strings.TrimSuffix(line, "\\") + " ")
			continue
		}
		cur.WriteString(line)
		flush()
	}
	flush()
	return stages
}

// TestStaticBuild builds tokscope as the Dockerfile does (CGO_ENABLED=0) and checks the result
// is a static executable, with no dynamic loader to find on distroless/static: a dependency
// that needs cgo would break the image, and fails here first. Without the Dockerfile's
// -trimpath, which changes nothing of how the binary is linked but every package's compile:
// with it, this build compiled the whole module and the standard library again (two to four
// minutes on a loaded 2-core machine); without it, it reuses what `CGO_ENABLED=0 go vet`
// (scripts/test.sh) and the other CGO_ENABLED=0 builds of the tests compiled.
func TestStaticBuild(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "tokscope")
	cmd := exec.Command("go", "build", "-ldflags=-s -w", "-o", bin, "..")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("CGO_ENABLED=0 go build: %v\n%s", err, out)
	}
	f, err := elf.Open(bin)
	if err != nil {
		t.Skipf("not an ELF platform: %v", err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP || p.Type == elf.PT_DYNAMIC {
			t.Fatalf("the CGO_ENABLED=0 build is dynamically linked (%v)", p.Type)
		}
	}
}
