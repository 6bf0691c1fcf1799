package kubedocs

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	psapi "k8s.io/pod-security-admission/api"
	psapolicy "k8s.io/pod-security-admission/policy"
	"sigs.k8s.io/yaml"
)

// manifest is one YAML document of a fenced block with apiVersion and kind.
type manifest struct {
	where string
	src   string
}

// manifests returns every Kubernetes document of the ```yaml blocks of
// README.md and docs/*.md (a block's documents split at ---).
func manifests(t *testing.T) []manifest {
	t.Helper()
	files, _ := filepath.Glob("../../docs/*.md")
	files = append([]string{"../../README.md"}, files...)
	fence := regexp.MustCompile("^\\s*```")
	var out []manifest
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(string(b), "\n")
		for i := 0; i < len(lines); i++ {
			if strings.TrimSpace(lines[i]) != "```yaml" {
				continue
			}
			start := i + 1
			var doc []string
			docLine := start
			flush := func() {
				src := strings.Join(doc, "\n")
				if regexp.MustCompile(`(?m)^apiVersion:`).MatchString(src) && regexp.MustCompile(`(?m)^kind:`).MatchString(src) {
					out = append(out, manifest{fmt.Sprintf("%s:%d", file, docLine+1), src})
				}
				doc = nil
			}
			for i = start; i < len(lines) && !fence.MatchString(lines[i]); i++ {
				if lines[i] == "---" {
					flush()
					docLine = i + 1
					continue
				}
				doc = append(doc, lines[i])
			}
			flush()
		}
	}
	return out
}

// TestKubernetesManifestsDecodeStrictly: each manifest decodes into its
// kind's k8s.io/api type with unknown and duplicate fields refused (a
// misspelt or misplaced field is silently dropped by kubectl's lenient
// path). A kind the test does not know fails, so none goes unchecked.
func TestKubernetesManifestsDecodeStrictly(t *testing.T) {
	ms := manifests(t)
	if len(ms) < 4 {
		t.Fatalf("found %d Kubernetes manifests; the extractor is broken", len(ms))
	}
	claims := map[string]*corev1.PersistentVolumeClaim{}
	var jobs []struct {
		where string
		spec  *batchv1.JobSpec
	}
	for _, m := range ms {
		var head struct{ APIVersion, Kind string }
		if err := yaml.Unmarshal([]byte(m.src), &head); err != nil {
			t.Errorf("%s: %v", m.where, err)
			continue
		}
		var obj any
		switch head.APIVersion + " " + head.Kind {
		case "batch/v1 CronJob":
			obj = &batchv1.CronJob{}
		case "batch/v1 Job":
			obj = &batchv1.Job{}
		case "v1 PersistentVolumeClaim":
			obj = &corev1.PersistentVolumeClaim{}
		case "v1 ConfigMap":
			obj = &corev1.ConfigMap{}
		case "v1 Pod":
			obj = &corev1.Pod{}
		case "v1 Service":
			obj = &corev1.Service{}
		case "apps/v1 Deployment":
			obj = &appsv1.Deployment{}
		case "apps/v1 StatefulSet":
			obj = &appsv1.StatefulSet{}
		default:
			t.Errorf("%s: %s %s: add its k8s.io/api type to this test", m.where, head.APIVersion, head.Kind)
			continue
		}
		if err := yaml.UnmarshalStrict([]byte(m.src), obj); err != nil {
			t.Errorf("%s: %s: %v", m.where, head.Kind, err)
			continue
		}
		var top map[string]any
		if err := yaml.Unmarshal([]byte(m.src), &top); err == nil {
			if _, ok := top["status"]; ok {
				// The server writes status; kubeconform -strict refuses
				// it in a manifest.
				t.Errorf("%s: %s has a status: field", m.where, head.Kind)
			}
		}
		switch o := obj.(type) {
		case *batchv1.CronJob:
			if runsWatch(&o.Spec.JobTemplate.Spec.Template.Spec) && o.Spec.StartingDeadlineSeconds == nil {
				t.Errorf("%s: a watch CronJob without startingDeadlineSeconds: a run that could not start on time starts late, and past 100 missed schedules none starts", m.where)
			}
			jobs = append(jobs, struct {
				where string
				spec  *batchv1.JobSpec
			}{m.where, &o.Spec.JobTemplate.Spec})
		case *batchv1.Job:
			jobs = append(jobs, struct {
				where string
				spec  *batchv1.JobSpec
			}{m.where, &o.Spec})
		case *corev1.PersistentVolumeClaim:
			claims[o.Name] = o
		}
	}
	if len(jobs) < 2 {
		t.Fatalf("found %d Jobs and CronJobs; the extractor is broken", len(jobs))
	}
	watchJobs := 0
	for _, j := range jobs {
		checkWatchJob(t, j.where, j.spec, claims)
		if runsWatch(&j.spec.Template.Spec) {
			watchJobs++
			for _, p := range append(restrictedProblems(&j.spec.Template.Spec), resourceProblems(&j.spec.Template.Spec)...) {
				t.Errorf("%s: %s", j.where, p)
			}
		}
		if p := j.spec.PodFailurePolicy; p != nil {
			for _, r := range p.Rules {
				for _, c := range r.OnPodConditions {
					if c.Status == "" {
						// The server defaults it to True; kubeconform
						// -strict's schema requires it.
						t.Errorf("%s: podFailurePolicy onPodConditions %s without status", j.where, c.Type)
					}
				}
			}
		}
	}
	if watchJobs < 2 {
		t.Fatalf("found %d watch Jobs and CronJobs; the extractor is broken", watchJobs)
	}
}

// runsWatch says a pod runs healthctl watch.
func runsWatch(pod *corev1.PodSpec) bool {
	for _, c := range pod.Containers {
		if strings.Contains(c.Image, "healthctl") && len(c.Args) > 0 && c.Args[0] == "watch" {
			return true
		}
	}
	return false
}

// restrictedProblems is what the restricted Pod Security Standard refuses
// in a pod, judged by Kubernetes' own admission library
// (k8s.io/pod-security-admission, the code a namespace enforcing the
// standard runs, at the latest version): one line per check that fails,
// its reason and detail as the admission message gives them.
// https://kubernetes.io/docs/concepts/security/pod-security-standards/
func restrictedProblems(pod *corev1.PodSpec) []string {
	eval, err := psapolicy.NewEvaluator(psapolicy.DefaultChecks(), nil)
	if err != nil {
		return []string{"the Pod Security evaluator: " + err.Error()}
	}
	var out []string
	lv := psapi.LevelVersion{Level: psapi.LevelRestricted, Version: psapi.LatestVersion()}
	for _, r := range eval.EvaluatePod(lv, &metav1.ObjectMeta{Name: "healthctl"}, pod) {
		if !r.Allowed {
			out = append(out, r.ForbiddenReason+" ("+r.ForbiddenDetail+")")
		}
	}
	return out
}

// resourceProblems holds each container to a memory request and limit and
// a CPU request: a sweep's memory grows with the fleet, and without a
// limit a runaway one takes the node's.
func resourceProblems(pod *corev1.PodSpec) []string {
	var out []string
	for _, c := range pod.Containers {
		r := c.Resources
		if r.Requests.Cpu().IsZero() || r.Requests.Memory().IsZero() || r.Limits.Memory().IsZero() {
			out = append(out, fmt.Sprintf("container %q: want resources.requests cpu and memory and limits memory", c.Name))
		}
	}
	return out
}

// checkWatchJob holds a Job that runs `healthctl watch --once` to what the
// docs promise: a sweep that ran leaves the pod Succeeded, a failed pod is
// not re-run six times, and pods running at once on a claim can all mount it.
func checkWatchJob(t *testing.T, where string, spec *batchv1.JobSpec, claims map[string]*corev1.PersistentVolumeClaim) {
	pod := spec.Template.Spec
	for _, c := range pod.Containers {
		if !strings.Contains(c.Image, "healthctl") || len(c.Args) == 0 || c.Args[0] != "watch" || !slices.Contains(c.Args, "--once") {
			continue
		}
		if !slices.Contains(c.Args, "--exit-0-on-decision") {
			t.Errorf("%s: watch --once without --exit-0-on-decision: exit 8 or 9 marks the pod Failed", where)
		}
		if i := slices.Index(c.Args, "--failure-threshold"); i < 0 || i+1 >= len(c.Args) || c.Args[i+1] == "1" {
			t.Errorf("%s: watch --once without --failure-threshold above 1: the first 503 is an outage", where)
		}
	}
	if spec.BackoffLimit == nil && spec.BackoffLimitPerIndex == nil {
		t.Errorf("%s: no backoffLimit (the default, 6, re-runs a failed sweep six times)", where)
	}
	if pod.RestartPolicy != corev1.RestartPolicyNever {
		t.Errorf("%s: restartPolicy %q: a Job's watch runs once (Never)", where, pod.RestartPolicy)
	}
	parallel := spec.Parallelism != nil && *spec.Parallelism > 1
	for _, v := range pod.Volumes {
		if v.PersistentVolumeClaim == nil {
			continue
		}
		pvc := claims[v.PersistentVolumeClaim.ClaimName]
		if pvc == nil {
			t.Errorf("%s: claim %q is not defined next to it (its access mode matters)", where, v.PersistentVolumeClaim.ClaimName)
			continue
		}
		if parallel && !slices.Contains(pvc.Spec.AccessModes, corev1.ReadWriteMany) {
			t.Errorf("%s: %d pods at once mount claim %q, which is not ReadWriteMany (%v)", where, *spec.Parallelism, pvc.Name, pvc.Spec.AccessModes)
		}
	}
}

// TestStrictDecodeCanFail: a misplaced field fails the decode.
func TestStrictDecodeCanFail(t *testing.T) {
	bad := []byte("apiVersion: batch/v1\nkind: Job\nmetadata: {name: x}\nspec:\n  template:\n    spec:\n      restartPolicy: Never\n      backoffLimit: 0\n      containers: [{name: a, image: b}]\n")
	if err := yaml.UnmarshalStrict(bad, &batchv1.Job{}); err == nil || !bytes.Contains([]byte(err.Error()), []byte("backoffLimit")) {
		t.Fatalf("backoffLimit in the pod spec: %v", err)
	}
}

// TestRestrictedCheckCanFail: the pod the docs showed before (runAsNonRoot
// and fsGroup alone, no resources) fails the restricted check on each
// field it lacks, and the resources check.
func TestRestrictedCheckCanFail(t *testing.T) {
	src := []byte("restartPolicy: Never\nsecurityContext: {runAsNonRoot: true, fsGroup: 65532}\ncontainers: [{name: watch, image: example/healthctl, args: [watch, --once]}]\n")
	var pod corev1.PodSpec
	if err := yaml.UnmarshalStrict(src, &pod); err != nil {
		t.Fatal(err)
	}
	got := append(restrictedProblems(&pod), resourceProblems(&pod)...)
	want := []string{
		`allowPrivilegeEscalation != false (container "watch" must set securityContext.allowPrivilegeEscalation=false)`,
		`unrestricted capabilities (container "watch" must set securityContext.capabilities.drop=["ALL"])`,
		`seccompProfile (pod or container "watch" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")`,
		`container "watch": want resources.requests cpu and memory and limits memory`,
	}
	if !slices.Equal(got, want) {
		t.Errorf("problems\n got %q\nwant %q", got, want)
	}
	root := []byte("securityContext: {runAsUser: 0, seccompProfile: {type: Unconfined}}\nvolumes: [{name: h, hostPath: {path: /}}]\ncontainers: [{name: c, image: i, securityContext: {allowPrivilegeEscalation: false, capabilities: {drop: [ALL], add: [NET_RAW]}}}]\n")
	pod = corev1.PodSpec{}
	if err := yaml.UnmarshalStrict(root, &pod); err != nil {
		t.Fatal(err)
	}
	got = restrictedProblems(&pod)
	for _, w := range []string{"restricted volume types", "unrestricted capabilities", "seccompProfile", "runAsNonRoot != true", "runAsUser=0"} {
		if !slices.ContainsFunc(got, func(g string) bool { return strings.HasPrefix(g, w) }) {
			t.Errorf("no %q among %q", w, got)
		}
	}
	want = got
	if !slices.Equal(got, want) {
		t.Errorf("problems\n got %q\nwant %q", got, want)
	}
}
