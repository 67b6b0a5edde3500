/* lm_bench_run: one workload in an enabled VM, stock and shimmed, interleaved round by round (so
 * that drift — heat, other load — reaches both arms alike), recorded as an evidence folder. */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bench_internal.h"
#include "clock.h"
#include "context_internal.h"
#include "error_internal.h"
#include "flow_session.h"
#include "fs.h"
#include "guest_activation.h"
#include "proc.h"
#include "random.h"
#include "sha256.h"
#include "lume-metal/profile.h"
#include "lume-metal/version.h"
#include "text.h"

/* A run's output kept in memory (and written to the folder); beyond this it is an error. */
#define OUTPUT_MAX (64u << 20)


static const char *const vm_arms[2] = {"stock", "shimmed"};
static const char *const host_arms[1] = {"host"};

/* Where the workload runs: an enabled VM (two arms, over SSH), or this host (one arm). */
typedef struct {
	lm_flow_session *s;     /* NULL on bare metal */
	char *cmds[2];          /* the VM's command lines per arm */
	char records[32];       /* "bench-<16 hex>": the prefix of each run's record directory in the guest */
	char **local_argv;      /* bare metal: argv with the program's path first */
	const char *const *arms;
	int narms;
} target;

/* cmd: the VM's command line for this run (its arm's, with its record directory). */
static int target_exec(const lm_context *ctx, const target *t, const char *cmd, char **out, char **err, int *status)
{
	const lm_proc_options o = {.timeout = LM_TIMEOUT_MAX, .output_max = OUTPUT_MAX, .cancel = ctx};
	lm_proc_result res;
	int rc;

	if (t->s != NULL)
		return lm_ssh_exec_capture(lm_flow_session_ssh(t->s), cmd, OUTPUT_MAX, out, err, status);
	if ((rc = lm_proc_run(t->local_argv[0], (const char *const *)t->local_argv + 1, &o, &res)) < 0)
		return rc;
	*out = res.out; /* both strings, "" when the stream was empty */
	*err = res.err;
	*status = res.exit_code;
	return 0;
}

void lm_bench_iso_time(double t, char *buf, size_t size)
{
	time_t tt = (time_t)t;
	struct tm tm;

	if (!(t >= 0 && t <= 253402300799.0) || gmtime_r(&tt, &tm) == NULL ||
	    strftime(buf, size, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
		snprintf(buf, size, "unknown");
}

/* The folder: created, or an existing empty one; never one that holds files (a record is never
 * mixed with another). *abs gets its absolute path. */
int lm_bench_make_folder(const char *dir, char **abs)
{
	char **created = NULL, *real;
	struct stat st;
	DIR *d;
	struct dirent *e;
	int rc, used = 0;

	*abs = NULL;
	if (dir == NULL || dir[0] == '\0')
		return lm_error_set(LM_EINVALID, "bench: no folder given for the record");
	if (stat(dir, &st) == 0) {
		if (!S_ISDIR(st.st_mode))
			return lm_error_set(LM_EINVALID, "%s exists and is not a folder", dir);
		if ((d = opendir(dir)) == NULL)
			return lm_error_set(LM_EIO, "cannot read the folder %s: %s", dir, strerror(errno));
		while ((e = readdir(d)) != NULL)
			if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
				used = 1;
		closedir(d);
		if (used)
			return lm_error_set(LM_EINVALID, "%s is not empty: a record is never written over other files", dir);
	} else if ((rc = lm_fs_mkdir_p(dir, 0755, &created)) < 0) {
		return rc;
	}
	lm_strv_free(created);
	if ((real = realpath(dir, NULL)) == NULL)
		return lm_error_set(LM_EIO, "cannot resolve %s: %s", dir, strerror(errno));
	*abs = real;
	return 0;
}

/* The workload as run: llama-bench writes JSON only when asked (-o json); without an -o of its
 * own the record asks for it. */
static int workload_argv(const lm_bench_options *o, const char ***argv, size_t *argc)
{
	size_t i, n = o->argc;
	int has_output = 0;
	const char **v;

	for (i = 1; i < o->argc; i++) {
		if (strcmp(o->argv[i], "-o") != 0 && strcmp(o->argv[i], "--output") != 0)
			continue;
		has_output = 1;
		if (o->parser == LM_BENCH_PARSER_LLAMA_BENCH && (i + 1 == o->argc ||
		    (strcmp(o->argv[i + 1], "json") != 0 && strcmp(o->argv[i + 1], "jsonl") != 0)))
			return lm_error_set(LM_EINVALID, "the workload's %s %s: llama-bench's output is read as JSON, so "
			    "it must be json or jsonl (or not given: json is asked for); any other output is recorded "
			    "only without the llama-bench parser", o->argv[i], i + 1 < o->argc ? o->argv[i + 1] : "");
	}
	if ((v = calloc(n + 3, sizeof(*v))) == NULL)
		return lm_error_nomem();
	memcpy(v, o->argv, n * sizeof(*v));
	if (o->parser == LM_BENCH_PARSER_LLAMA_BENCH && !has_output) {
		v[n++] = "-o";
		v[n++] = "json";
	}
	*argv = v;
	*argc = n;
	return 0;
}

/* The model files a llama-bench command names (-m/--model, comma-separated lists too). */
static cJSON *model_paths(const char *const *argv, size_t argc)
{
	cJSON *arr = cJSON_CreateArray();
	size_t i;

	for (i = 1; arr != NULL && i + 1 < argc; i++) {
		const char *tok;
		char *path;
		size_t n;
		lm_scan list;
		if (strcmp(argv[i], "-m") != 0 && strcmp(argv[i], "--model") != 0)
			continue;
		i++;
		lm_scan_init(&list, argv[i], strlen(argv[i]));
		while (lm_scan_token(&list, ",", &tok, &n) == 1) {
			if ((path = lm_text_dupn(tok, n)) == NULL)
				return arr;
			cJSON_AddItemToArray(arr, cJSON_CreateString(path));
			free(path);
		}
	}
	return arr;
}

/* SHA-256 computed in the guest, with macOS's own `shasum -a 256`, and the size (`wc -c`):
 * {"path", "sha256", "size"} (nulls and "error" when it could not be read). */
static cJSON *guest_hash(lm_ssh *ssh, const char *path)
{
	cJSON *o = cJSON_CreateObject();
	char *q = NULL, *cmd = NULL, *out = NULL, *err = NULL, why[512], hex[65];
	const char *line;
	size_t n;
	uint64_t size = 0;
	lm_scan lines, l;
	int status = 0, rc, have_size = 0;

	if (o == NULL)
		return NULL;
	cJSON_AddStringToObject(o, "path", path);
	rc = lm_shell_quote(path, &q) < 0 ? -1 : (cmd = lm_format("shasum -a 256 -- %s && wc -c < %s", q, q)) == NULL ?
	    lm_error_nomem() : lm_ssh_exec_capture(ssh, cmd, 64 * 1024, &out, &err, &status);
	/* "HEX  PATH" (shasum), then the size (wc -c, blanks before it) */
	lm_scan_init(&lines, out, rc == 0 ? strlen(out) : 0);
	if (rc == 0 && status == 0 && lm_scan_line(&lines, &line, &n) != 0 && n >= 64 &&
	    lm_text_copy(hex, sizeof(hex), line, 64) == 0 && strspn(hex, "0123456789abcdef") == 64) {
		cJSON_AddStringToObject(o, "sha256", hex);
		if (lm_scan_line(&lines, &line, &n) != 0) {
			lm_scan_init(&l, line, n);
			lm_scan_span(&l, " \t");
			have_size = lm_scan_u64(&l, UINT64_MAX, &size) == 0;
		}
		if (have_size)
			cJSON_AddNumberToObject(o, "size", (double)size);
		else
			cJSON_AddNullToObject(o, "size");
	} else {
		cJSON_AddNullToObject(o, "sha256");
		cJSON_AddNullToObject(o, "size");
		if (rc < 0)
			snprintf(why, sizeof(why), "%s", lm_error_last()->message);
		else if (err != NULL && err[0] != '\0')
			snprintf(why, sizeof(why), "%.*s", (int)strcspn(err, "\n"), err);
		else
			snprintf(why, sizeof(why), "shasum -a 256 exited %d without a hash", status);
		cJSON_AddStringToObject(o, "error", why);
	}
	lm_free(q);
	free(cmd);
	lm_free(out);
	lm_free(err);
	return o;
}

/* The guest's versions and hardware, one line each, whatever fails. */
static const char guest_facts_cmd[] =
    "printf '%s\\n' \"$(sw_vers -productVersion 2>/dev/null)\" \"$(sw_vers -buildVersion 2>/dev/null)\" "
    "\"$(sysctl -n hw.model 2>/dev/null)\" \"$(sysctl -n hw.ncpu 2>/dev/null)\" "
    "\"$(sysctl -n hw.memsize 2>/dev/null)\" \"$(sysctl -n machdep.cpu.brand_string 2>/dev/null)\" \"$SHELL\"";

/* The next line into obj[key]: null when there is none or it is empty; a number when asked for
 * and it is one of fewer than 16 digits (exact as a JSON number); else the text. */
static void add_line(cJSON *obj, const char *key, lm_scan *s, int number)
{
	const char *line;
	char *text;
	size_t n;
	uint64_t v;

	if (lm_scan_line(s, &line, &n) == 0 || n == 0)
		cJSON_AddNullToObject(obj, key);
	else if (number && n < 16 && lm_text_parse_u64(line, n, UINT64_MAX, &v) == 0)
		cJSON_AddNumberToObject(obj, key, (double)v);
	else if ((text = lm_text_dupn(line, n)) != NULL) {
		cJSON_AddStringToObject(obj, key, text);
		free(text);
	}
}

static int guest_and_vm(lm_flow_session *s, cJSON *meta)
{
	const lm_vm_outcome *o = lm_flow_session_vm(s);
	cJSON *vm = cJSON_AddObjectToObject(meta, "vm"), *guest = cJSON_AddObjectToObject(meta, "guest");
	char *out = NULL, version[128];
	lm_scan lines;
	int status = 0, rc;

	if (vm == NULL || guest == NULL)
		return lm_error_nomem();
	if ((rc = lm_ssh_exec_capture(lm_flow_session_ssh(s), guest_facts_cmd, 64 * 1024, &out, NULL, &status)) < 0)
		return rc;
	lm_scan_init(&lines, out, strlen(out));
	cJSON_AddStringToObject(vm, "name", o->vm);
	cJSON_AddStringToObject(vm, "manager", lm_flow_session_manager(s));
	lm_flow_session_manager_version(s, version, sizeof(version));
	if (version[0] != '\0')
		cJSON_AddStringToObject(vm, "manager_version", version);
	else
		cJSON_AddNullToObject(vm, "manager_version");
	cJSON_AddStringToObject(guest, "os", o->guest.os);
	cJSON_AddStringToObject(guest, "arch", o->guest.arch);
	add_line(guest, "os_version", &lines, 0);
	add_line(guest, "os_build", &lines, 0);
	add_line(vm, "model", &lines, 0);
	add_line(vm, "cpus", &lines, 1);
	add_line(vm, "memory_bytes", &lines, 1);
	add_line(vm, "cpu", &lines, 0);
	/* The display as the VM manager configures it (Lume, Tart); unknown for UTM and none. */
	if (o->info.display[0] != '\0')
		cJSON_AddStringToObject(vm, "display", o->info.display);
	else
		cJSON_AddNullToObject(vm, "display");
	if (o->guest.sip[0] != '\0')
		cJSON_AddStringToObject(guest, "sip", o->guest.sip);
	else
		cJSON_AddNullToObject(guest, "sip");
	add_line(guest, "shell", &lines, 0);
	lm_free(out);
	return 0;
}

static int profile_section(lm_flow_session *s, cJSON *meta)
{
	const lm_profile *p = lm_flow_session_profile(s);
	lm_env_entry env[LM_PROFILE_ENV_MAX];
	cJSON *sec = cJSON_AddObjectToObject(meta, "profile"), *e, *def;
	char *json = NULL;
	size_t n = 0, i;
	int rc;

	if (sec == NULL)
		return lm_error_nomem();
	cJSON_AddStringToObject(sec, "name", lm_profile_name(p));
	if ((rc = lm_profile_render_env(p, env, &n)) < 0 || (rc = lm_profile_to_json(p, &json)) < 0)
		return rc;
	e = cJSON_AddObjectToObject(sec, "environment");
	for (i = 0; i < n; i++)
		cJSON_AddStringToObject(e, env[i].name, env[i].value);
	if ((def = cJSON_Parse(json)) != NULL)
		cJSON_AddItemToObject(sec, "definition", def);
	lm_free(json);
	return 0;
}

static cJSON *argv_json(const char *const *argv, size_t argc)
{
	cJSON *a = cJSON_CreateArray();
	size_t i;

	for (i = 0; a != NULL && i < argc; i++)
		cJSON_AddItemToArray(a, cJSON_CreateString(argv[i]));
	return a;
}

/* The records of one run, fetched from its guest directory into the folder as
 * <arm>-<round>.activation.<pid>.json (byte for byte), listed in *files; *took counts the
 * processes in which the shim took. */
static int store_activation(lm_ssh *ssh, const char *guest_dir, const char *dir, const char *arm_name, int round,
    cJSON **files, int *took)
{
	lm_activation_list list = { 0 };
	char name[96];
	size_t i;
	int rc;

	*took = 0;
	if ((rc = lm_activation_fetch(ssh, guest_dir, &list)) < 0)
		return rc;
	/* Evidence is every record or none: a run skips what it cannot read, bench does not. */
	if (list.nskipped > 0 || list.dropped > 0) {
		rc = list.nskipped > 0 ? lm_error_set(LM_EINVALID, "%s", list.skipped[0]) :
		    lm_error_set(LM_ETOOLARGE, "activation records: %s holds more than %d records (the limit)", guest_dir,
		    LM_ACTIVATION_MAX_RECORDS);
		lm_activation_list_dispose(&list);
		return rc;
	}
	if ((*files = cJSON_CreateArray()) == NULL)
		rc = lm_error_nomem();
	for (i = 0; i < list.count && rc == 0; i++) {
		snprintf(name, sizeof(name), "%s-%d.activation.%s", arm_name, round, list.items[i].file);
		*took += lm_activation_took(&list.items[i]);
		if ((rc = lm_bench_write_file(dir, name, list.items[i].text, list.items[i].text_len)) == 0 &&
		    !cJSON_AddItemToArray(*files, cJSON_CreateString(name)))
			rc = lm_error_nomem();
	}
	lm_activation_list_dispose(&list);
	return rc;
}

/* What the records say about the arm, in the run's step and as a warning when they contradict it. */
static void activation_detail(lm_context *ctx, const char *vm, int shimmed, int round, int nrecords, int took,
    char *detail, size_t len)
{
	size_t n = strlen(detail);

	snprintf(detail + n, len - n, "; %d process%s loaded the shim, %d with the unlock", nrecords,
	    nrecords == 1 ? "" : "es", took);
	if (shimmed && took == 0)
		lm_log(ctx, LM_LOG_WARN, "%s: no process of the shimmed run of round %d got the unlock (no activation "
		    "record in which the shim took): its figures are stock figures", vm, round);
	else if (!shimmed && nrecords > 0)
		lm_log(ctx, LM_LOG_WARN, "%s: %d process%s of the stock run of round %d loaded the shim (activation "
		    "records): the stock arm is not stock", vm, nrecords, nrecords == 1 ? "" : "es", round);
}

/* One run: its output captured, timed, written as <arm>-<round>.json|.stdout and .stderr; in a VM
 * with its own record directory in the guest, whose records join the folder. */
static int run_one(lm_context *ctx, const target *tg, const char *vm, const char *dir, int arm, int round,
    const lm_bench_options *o, double *seconds, int *status, char **out, char **err, cJSON *runs)
{
	char name[64], errname[64], detail[256], rec_name[64];
	const char *arm_name = tg->arms[arm];
	char *guest_dir = NULL, *cmd = NULL;
	lm_ssh *ssh = tg->s != NULL ? lm_flow_session_ssh(tg->s) : NULL;
	cJSON *run, *files = NULL;
	double t;
	int rc, took = 0;

	snprintf(name, sizeof(name), "%s-%d.%s", arm_name, round, o->parser == LM_BENCH_PARSER_NONE ? "stdout" : "json");
	snprintf(errname, sizeof(errname), "%s-%d.stderr", arm_name, round);
	snprintf(rec_name, sizeof(rec_name), "%s-%s-%d", tg->records, arm_name, round);
	if ((rc = lm_context_check_cancel(ctx, "benchmarking")) < 0)
		return rc;
	/* Both arms get a directory: a stock run that loads the shim anyway is found out. */
	if (ssh != NULL && ((rc = lm_activation_dir_make(ssh, lm_flow_session_vm(tg->s)->guest.home, rec_name,
	        &guest_dir)) < 0 || (rc = lm_activation_command(guest_dir, tg->cmds[arm], &cmd)) < 0))
		goto done;
	lm_context_step(ctx, vm, arm_name, LM_STEP_STARTED, 0, "");
	t = lm_clock_monotonic();
	rc = target_exec(ctx, tg, cmd, out, err, status);
	*seconds = lm_clock_monotonic() - t;
	if (rc == 0 && ssh != NULL)
		rc = store_activation(ssh, guest_dir, dir, arm_name, round, &files, &took);
	if (rc < 0) {
		lm_context_step(ctx, vm, arm_name, LM_STEP_FAILED, *seconds, lm_error_last()->message);
		goto done;
	}
	snprintf(detail, sizeof(detail), "round %d of %d, exit %d", round, o->rounds, *status);
	if (files != NULL)
		activation_detail(ctx, vm, arm == 1, round, cJSON_GetArraySize(files), took, detail, sizeof(detail));
	lm_context_step(ctx, vm, arm_name, LM_STEP_DONE, *seconds, detail);
	if ((rc = lm_bench_write_file(dir, name, *out, strlen(*out))) < 0 ||
	    (rc = lm_bench_write_file(dir, errname, *err, strlen(*err))) < 0)
		goto done;
	if ((run = cJSON_CreateObject()) == NULL) {
		rc = lm_error_nomem();
		goto done;
	}
	cJSON_AddItemToArray(runs, run);
	cJSON_AddStringToObject(run, "arm", arm_name);
	cJSON_AddNumberToObject(run, "round", round);
	cJSON_AddNumberToObject(run, "exit_status", *status);
	cJSON_AddNumberToObject(run, "seconds", *seconds);
	cJSON_AddStringToObject(run, "stdout", name);
	cJSON_AddStringToObject(run, "stderr", errname);
	if (files != NULL) {
		cJSON *act = cJSON_AddObjectToObject(run, "activation");

		if (act == NULL || !cJSON_AddItemToObject(act, "records", files) ||
		    cJSON_AddNumberToObject(act, "took", took) == NULL) {
			rc = lm_error_nomem();
			goto done;
		}
		files = NULL;
	}
done:
	/* Nothing left in the guest: the records are in the folder now (or the run failed, and that
	 * failure is the one to report). */
	if (guest_dir != NULL && lm_ssh_usable(ssh)) {
		char why[1024];
		int keep = rc;

		snprintf(why, sizeof(why), "%s", rc < 0 ? lm_error_last()->message : "");
		if (lm_activation_dir_remove(ssh, guest_dir) < 0 && keep == 0)
			rc = lm_error_last()->code;
		else if (keep < 0)
			lm_error_set(keep, "%s", why);
	}
	cJSON_Delete(files);
	free(guest_dir);
	free(cmd);
	return rc;
}

/* ---- results from the raw outputs (also what compare recomputes) ---- */

lm_bench_test *lm_bench_add_test(lm_bench_result *r, const char *name)
{
	lm_bench_test **grown, *t;

	if ((t = calloc(1, sizeof(*t))) == NULL)
		return NULL;
	if ((grown = realloc(r->tests, (r->ntests + 1) * sizeof(*grown))) == NULL) {
		free(t);
		return NULL;
	}
	r->tests = grown;
	t->size = sizeof(*t);
	snprintf(t->name, sizeof(t->name), "%s", name);
	r->tests[r->ntests++] = t;
	return t;
}

static lm_bench_test *test_for(lm_bench_result *r, const lm_llama_record *rec)
{
	char name[48];
	lm_bench_test *t;
	size_t i;

	lm_llama_record_name(rec, name, sizeof(name));
	for (i = 0; i < r->ntests; i++)
		if (strcmp(r->tests[i]->name, name) == 0)
			return r->tests[i];
	if ((t = lm_bench_add_test(r, name)) == NULL)
		return NULL;
	t->n_prompt = rec->n_prompt;
	t->n_gen = rec->n_gen;
	t->n_depth = rec->n_depth;
	return t;
}

/* Every sample of one test in one arm, over the rounds, to its median. */
static int arm_median(char *const *outs, int rounds, const char *test, double *median, size_t *count)
{
	double *all = NULL, *grown;
	size_t n = 0, i;
	int k, rc = 0;

	for (k = 0; outs != NULL && k < rounds && rc == 0; k++) {
		lm_llama_output lo;
		/* A run that does not parse is lm_bench_collect's to say; one that ran out of memory
		 * parsing would leave its samples out of the median: that is the failure. */
		if (outs[k] == NULL || (rc = lm_llama_parse(outs[k], strlen(outs[k]), &lo)) < 0) {
			if (rc == LM_ENOMEM)
				break;
			rc = 0;
			lm_error_clear();
			continue;
		}
		for (i = 0; i < lo.count; i++) {
			char name[48];
			lm_llama_record *rec = &lo.records[i];
			lm_llama_record_name(rec, name, sizeof(name));
			if (strcmp(name, test) != 0 || rec->nsamples == 0)
				continue;
			if ((grown = realloc(all, (n + rec->nsamples) * sizeof(*all))) == NULL) {
				rc = lm_error_nomem();
				break;
			}
			all = grown;
			memcpy(all + n, rec->samples_ts, rec->nsamples * sizeof(*all));
			n += rec->nsamples;
		}
		lm_llama_output_dispose(&lo);
	}
	*median = lm_bench_median(all, n);
	*count = n;
	free(all);
	return rc;
}

int lm_bench_collect(lm_bench_result *r, char *const *stock_out, char *const *shimmed_out, int rounds)
{
	char *const *arm_outs[2] = {stock_out, shimmed_out};
	char first[1024] = "";
	int a, k, rc = 0, first_error = 0;
	size_t i;

	/* The tests, in the order the runs printed them; a run that does not parse is an error (a run
	 * not made — NULL — is not). */
	for (a = 0; a < 2; a++)
		for (k = 0; k < rounds && arm_outs[a] != NULL; k++) {
			lm_llama_output lo;
			if (arm_outs[a][k] == NULL)
				continue;
			if ((rc = lm_llama_parse(arm_outs[a][k], strlen(arm_outs[a][k]), &lo)) < 0) {
				if (first_error == 0) {
					first_error = rc;
					snprintf(first, sizeof(first), "%s run %d: %s", vm_arms[a], k + 1, lm_error_last()->message);
				}
				continue;
			}
			if (lo.count > 0 && r->llama_build[0] == '\0')
				lm_llama_build_name(&lo.records[0], r->llama_build, sizeof(r->llama_build));
			for (i = 0; i < lo.count; i++)
				if (test_for(r, &lo.records[i]) == NULL) {
					lm_llama_output_dispose(&lo);
					return lm_error_nomem();
				}
			lm_llama_output_dispose(&lo);
		}
	for (i = 0; i < r->ntests; i++) {
		lm_bench_test *t = r->tests[i];
		if ((rc = arm_median(stock_out, rounds, t->name, &t->stock_median, &t->stock_samples)) < 0 ||
		    (rc = arm_median(shimmed_out, rounds, t->name, &t->shimmed_median, &t->shimmed_samples)) < 0)
			return rc;
		t->ratio = lm_bench_ratio(t->shimmed_median, t->stock_median);
	}
	return first_error ? lm_error_set(first_error, "%s", first) : 0;
}

void lm_bench_collect_metal(lm_bench_result *r, char *const *stock_err, char *const *shimmed_err, int rounds)
{
	int k;

	lm_bench_metal_parse(NULL, r->stock_metal);
	lm_bench_metal_parse(NULL, r->shimmed_metal);
	for (k = 0; k < rounds && !r->stock_metal->found; k++)
		lm_bench_metal_parse(stock_err[k], r->stock_metal);
	for (k = 0; shimmed_err != NULL && k < rounds && !r->shimmed_metal->found; k++)
		lm_bench_metal_parse(shimmed_err[k], r->shimmed_metal);
	r->kernel_choice_changed = (r->stock_metal->found || r->shimmed_metal->found) &&
	    lm_bench_metal_differs(r->stock_metal, r->shimmed_metal);
}

/* Without a parser: the whole command's wall clock, one "test". */
static int collect_wall(lm_bench_result *r)
{
	lm_bench_test *t;
	double *v;
	int k;

	if ((v = calloc((size_t)r->rounds, sizeof(*v))) == NULL)
		return lm_error_nomem();
	if ((t = lm_bench_add_test(r, "wall")) == NULL) {
		free(v);
		return lm_error_nomem();
	}
	for (k = 0; k < r->rounds; k++)
		v[k] = r->stock_seconds[k];
	t->stock_median = lm_bench_median(v, (size_t)r->rounds);
	for (k = 0; k < r->rounds; k++)
		v[k] = r->shimmed_seconds[k];
	t->shimmed_median = lm_bench_median(v, (size_t)r->rounds);
	t->stock_samples = t->shimmed_samples = (size_t)r->rounds;
	/* seconds: the speed-up is stock / shimmed */
	t->ratio = lm_bench_ratio(t->stock_median, t->shimmed_median);
	free(v);
	return 0;
}

/* ---- the run ---- */

typedef struct {
	char **out[2], **err[2];
} outputs;

static void outputs_free(outputs *o, int rounds)
{
	int a, k;

	for (a = 0; a < 2; a++) {
		for (k = 0; k < rounds && o->out[a] != NULL; k++) {
			lm_free(o->out[a][k]);
			lm_free(o->err[a][k]);
		}
		free(o->out[a]);
		free(o->err[a]);
	}
}

static int write_record(lm_bench_result *r, cJSON *meta)
{
	char *json = cJSON_Print(meta), *md = lm_bench_metadata_md(meta), *csv = lm_bench_results_csv(r);
	char *readme = lm_bench_readme(r, meta);
	int rc;

	if (json == NULL || md == NULL || csv == NULL || readme == NULL)
		rc = lm_error_nomem();
	else if ((rc = lm_bench_write_file(r->dir, "metadata.json", json, strlen(json))) == 0 &&
	    (rc = lm_bench_write_file(r->dir, "metadata.md", md, strlen(md))) == 0 &&
	    (rc = lm_bench_write_file(r->dir, "results.csv", csv, strlen(csv))) == 0 &&
	    (rc = lm_bench_write_file(r->dir, "README.md", readme, strlen(readme))) == 0)
		rc = lm_bench_write_sums(r->dir);
	cJSON_free(json);
	free(md);
	free(csv);
	free(readme);
	return rc;
}

static int check_options(const lm_bench_options *o)
{
	if (o == NULL || (o->vm == NULL && !o->bare_metal) || o->argc == 0 || o->argv == NULL)
		return lm_error_set(LM_EINVALID, "bench: a VM and a workload command are required");
	if (o->rounds < 0 || o->rounds > LM_BENCH_ROUNDS_MAX)
		return lm_error_set(LM_EINVALID, "bench: %d rounds; between 1 and %d", o->rounds, LM_BENCH_ROUNDS_MAX);
	if (o->parser != LM_BENCH_PARSER_LLAMA_BENCH && o->parser != LM_BENCH_PARSER_NONE)
		return lm_error_set(LM_EINVALID, "bench: unknown workload parser %d", (int)o->parser);
	return 0;
}

/* The profile asked for must be the one the VM was enabled with: the record names one profile. */
static int check_profile(lm_flow_session *s, const char *wanted)
{
	lm_profile *p = NULL;
	const char *have = lm_profile_name(lm_flow_session_profile(s));
	int rc;

	if (wanted == NULL)
		return 0;
	if ((rc = lm_profile_resolve(&p, wanted)) < 0)
		return rc;
	if (strcmp(lm_profile_name(p), have) != 0)
		rc = lm_error_set(LM_EINVALID, "%s is enabled with the profile %s, not %s", lm_flow_session_vm(s)->vm,
		    have, lm_profile_name(p));
	lm_profile_free(p);
	return rc;
}

/* SHA-256 of a file on this host (bare metal): {"path", "sha256"}, null and "error" when unreadable. */
static cJSON *local_hash(const char *path)
{
	cJSON *o = cJSON_CreateObject();
	uint8_t digest[32];
	char hex[65];

	if (o == NULL)
		return NULL;
	cJSON_AddStringToObject(o, "path", path);
	if (lm_sha256_file(path, digest) == 0) {
		struct stat st;
		lm_sha256_hex(digest, hex);
		cJSON_AddStringToObject(o, "sha256", hex);
		if (stat(path, &st) == 0)
			cJSON_AddNumberToObject(o, "size", (double)st.st_size);
		else
			cJSON_AddNullToObject(o, "size");
	} else {
		cJSON_AddNullToObject(o, "sha256");
		cJSON_AddNullToObject(o, "size");
		cJSON_AddStringToObject(o, "error", lm_error_last()->message);
	}
	return o;
}

/* The environment and the workload's files; in the guest (hashed there) or on this host. */
static int environment(const target *t, const char *const *argv, size_t argc, const lm_bench_options *o,
    cJSON *meta)
{
	lm_flow_session *s = t->s;
	lm_ssh *ssh = s != NULL ? lm_flow_session_ssh(s) : NULL;
	cJSON *tool = cJSON_AddObjectToObject(meta, "lume_metal"), *w, *models, *m, *hashed, *act;
	char program[4096], *line = NULL;
	int rc;

	cJSON_AddStringToObject(tool, "version", LUME_METAL_VERSION);
	cJSON_AddItemToObject(meta, "host", lm_bench_host_facts());
	if (s != NULL) {
		cJSON_AddStringToObject(tool, "bundle", lm_flow_session_vm(s)->bundle_id);
		cJSON_AddItemToObject(tool, "shim", guest_hash(ssh, lm_flow_session_shim(s)));
		cJSON_AddItemToObject(tool, "probe", guest_hash(ssh, lm_flow_session_probe(s)));
		if ((rc = guest_and_vm(s, meta)) < 0 || (rc = profile_section(s, meta)) < 0)
			return rc;
		/* Each run's records (runs[].activation): the folder says it carries them. */
		if ((act = cJSON_AddObjectToObject(meta, "activation")) == NULL ||
		    cJSON_AddStringToObject(act, "format", "lume-metal-activation/1") == NULL ||
		    cJSON_AddStringToObject(act, "variable", "LUME_METAL_RECORD_DIR") == NULL)
			return lm_error_nomem();
	}
	w = cJSON_AddObjectToObject(meta, "workload");
	cJSON_AddStringToObject(w, "parser", o->parser == LM_BENCH_PARSER_NONE ? "none" : "llama-bench");
	cJSON_AddItemToObject(w, "argv", argv_json(argv, argc));
	if (s != NULL) {
		cJSON_AddStringToObject(w, "stock_command", t->cmds[0]);
		cJSON_AddStringToObject(w, "shimmed_command", t->cmds[1]);
		if ((rc = lm_flow_session_program(s, argv, argc, program, sizeof(program))) < 0)
			return rc;
		if (program[0] != '\0')
			cJSON_AddItemToObject(w, "program", guest_hash(ssh, program));
		else
			cJSON_AddNullToObject(w, "program");
	} else {
		if ((rc = lm_shell_quote_argv((const char *const *)t->local_argv, argc, &line)) < 0)
			return rc;
		cJSON_AddStringToObject(w, "command", line);
		lm_free(line);
		cJSON_AddItemToObject(w, "program", local_hash(t->local_argv[0]));
	}
	models = model_paths(argv, argc);
	hashed = cJSON_AddArrayToObject(w, "models");
	cJSON_ArrayForEach(m, models)
		cJSON_AddItemToArray(hashed, s != NULL ? guest_hash(ssh, m->valuestring) : local_hash(m->valuestring));
	cJSON_Delete(models);
	return 0;
}

/* The VM (its session, the two arms' command lines), or this host (the program found on PATH). */
static int target_open(lm_context *ctx, const lm_bench_options *o, const char *const *argv, size_t argc, target *t)
{
	char *path = NULL;
	int rc;

	memset(t, 0, sizeof(*t));
	if (o->bare_metal) {
		t->arms = host_arms;
		t->narms = 1;
		if ((t->local_argv = calloc(argc + 1, sizeof(char *))) == NULL)
			return lm_error_nomem();
		memcpy(t->local_argv, argv, argc * sizeof(char *));
		if ((rc = lm_proc_find_program(argv[0], &path)) < 0)
			return rc;
		t->local_argv[0] = path;
		return 0;
	}
	t->arms = vm_arms;
	t->narms = 2;
	memcpy(t->records, "bench-", 6);
	if ((rc = lm_random_hex(t->records + 6, 8)) < 0)
		return rc;
	if ((rc = lm_flow_session_open(&t->s, ctx, o->vm)) < 0 || (rc = check_profile(t->s, o->profile)) < 0 ||
	    (rc = lm_flow_session_warn(t->s, argv, argc)) < 0 ||
	    (rc = lm_flow_session_command(t->s, 0, argv, argc, &t->cmds[0])) < 0 ||
	    (rc = lm_flow_session_command(t->s, 1, argv, argc, &t->cmds[1])) < 0)
		return rc;
	/* No time limit for the workload itself: a long benchmark is not a hung command (Ctrl-C is). */
	return lm_ssh_set_command_timeout(lm_flow_session_ssh(t->s), 0);
}

static void target_close(target *t)
{
	lm_free(t->cmds[0]);
	lm_free(t->cmds[1]);
	if (t->local_argv != NULL)
		free(t->local_argv[0]);
	free(t->local_argv);
	lm_flow_session_close(t->s);
}

static cJSON *new_metadata(const lm_bench_options *o)
{
	cJSON *meta = cJSON_CreateObject();
	char when[32];

	if (meta == NULL)
		return NULL;
	cJSON_AddStringToObject(meta, "record", "lume-metal bench 1");
	if (o->bare_metal)
		cJSON_AddStringToObject(meta, "kind", "bare-metal");
	lm_bench_iso_time(lm_clock_epoch(), when, sizeof(when));
	cJSON_AddStringToObject(meta, "started_at", when);
	return meta;
}

static void add_protocol(cJSON *meta, const lm_bench_options *o)
{
	cJSON *protocol = cJSON_AddObjectToObject(meta, "protocol");

	cJSON_AddNumberToObject(protocol, "rounds", o->rounds);
	cJSON_AddStringToObject(protocol, "order", o->bare_metal ? "the host arm, round by round" :
	    "stock, shimmed, interleaved round by round");
	cJSON_AddStringToObject(protocol, "headline", o->parser == LM_BENCH_PARSER_NONE ?
	    "median wall-clock seconds per arm; speed-up = stock / shimmed" :
	    "median of samples_ts per test and arm; ratio = shimmed / stock");
}

/* The rounds, interleaved; then the results from the raw outputs. */
static int run_rounds(lm_context *ctx, const target *t, const lm_bench_options *o, lm_bench_result *r,
    outputs *out, cJSON *runs)
{
	int k, a, rc = 0, failed = 0;
	char why[1024];

	for (k = 0; k < o->rounds && rc == 0; k++)
		for (a = 0; a < t->narms && rc == 0; a++) {
			double *sec = a == 0 ? &r->stock_seconds[k] : &r->shimmed_seconds[k];
			int *st = a == 0 ? &r->stock_exit[k] : &r->shimmed_exit[k];
			rc = run_one(ctx, t, r->vm, r->dir, a, k + 1, o, sec, st, &out->out[a][k], &out->err[a][k], runs);
			if (rc == 0 && *st != 0 && !failed)
				failed = lm_error_set(LM_EREMOTE, "the %s run of round %d exited with %d: %s", t->arms[a],
				    k + 1, *st, out->err[a][k][0] ? out->err[a][k] : "no output on stderr");
		}
	if (rc < 0)
		return rc;
	/* A failed run is the error to report; what the others printed is still summed up. */
	if (failed)
		snprintf(why, sizeof(why), "%s", lm_error_last()->message);
	rc = o->parser == LM_BENCH_PARSER_LLAMA_BENCH ?
	    lm_bench_collect(r, out->out[0], t->narms > 1 ? out->out[1] : NULL, o->rounds) : collect_wall(r);
	lm_bench_collect_metal(r, out->err[0], t->narms > 1 ? out->err[1] : NULL, o->rounds);
	return failed ? lm_error_set(failed, "%s", why) : rc;
}

static int alloc_result(lm_bench_result *r, outputs *out, int rounds)
{
	int a;

	if ((r->stock_seconds = calloc((size_t)rounds, sizeof(double))) == NULL ||
	    (r->shimmed_seconds = calloc((size_t)rounds, sizeof(double))) == NULL ||
	    (r->stock_exit = calloc((size_t)rounds, sizeof(int))) == NULL ||
	    (r->shimmed_exit = calloc((size_t)rounds, sizeof(int))) == NULL)
		return lm_error_nomem();
	for (a = 0; a < 2; a++)
		if ((out->out[a] = calloc((size_t)rounds, sizeof(char *))) == NULL ||
		    (out->err[a] = calloc((size_t)rounds, sizeof(char *))) == NULL)
			return lm_error_nomem();
	return 0;
}

int lm_bench_result_new(lm_bench_result **out)
{
	lm_bench_result *r;

	if ((*out = r = calloc(1, sizeof(*r))) == NULL)
		return lm_error_nomem();
	r->size = sizeof(*r);
	if ((r->stock_metal = calloc(1, sizeof(*r->stock_metal))) == NULL ||
	    (r->shimmed_metal = calloc(1, sizeof(*r->shimmed_metal))) == NULL) {
		lm_bench_result_free(r);
		*out = NULL;
		return lm_error_nomem();
	}
	r->stock_metal->size = r->shimmed_metal->size = sizeof(lm_bench_metal);
	lm_bench_metal_parse(NULL, r->stock_metal);
	lm_bench_metal_parse(NULL, r->shimmed_metal);
	return 0;
}

int lm_bench_run(lm_context *ctx, const lm_bench_options *opts, lm_bench_result **result)
{
	lm_bench_result *r;
	lm_bench_options o;
	target t;
	const char **argv = NULL;
	size_t argc = 0;
	char when[32];
	outputs out;
	cJSON *meta = NULL, *runs;
	double t0 = lm_clock_monotonic();
	int rc;

	memset(&out, 0, sizeof(out));
	memset(&t, 0, sizeof(t));
	if ((rc = lm_bench_result_new(result)) < 0)
		return rc;
	r = *result;
	if ((rc = check_options(opts)) < 0)
		return rc;
	o = *opts;
	if (o.rounds == 0)
		o.rounds = LM_BENCH_ROUNDS_DEFAULT;
	r->rounds = o.rounds;
	r->parser = o.parser;
	r->bare_metal = o.bare_metal;
	snprintf(r->vm, sizeof(r->vm), "%s", o.bare_metal ? "host" : o.vm);
	if ((rc = alloc_result(r, &out, o.rounds)) < 0 || (rc = workload_argv(&o, &argv, &argc)) < 0 ||
	    (rc = target_open(ctx, &o, argv, argc, &t)) < 0)
		goto done;
	if (t.s != NULL)
		snprintf(r->vm, sizeof(r->vm), "%s", lm_flow_session_vm(t.s)->vm);
	if ((rc = lm_bench_make_folder(o.out_dir, &r->dir)) < 0)
		goto done;
	if ((meta = new_metadata(&o)) == NULL) {
		rc = lm_error_nomem();
		goto done;
	}
	if ((rc = environment(&t, argv, argc, &o, meta)) < 0)
		goto done;
	add_protocol(meta, &o);
	runs = cJSON_AddArrayToObject(meta, "runs");
	rc = run_rounds(ctx, &t, &o, r, &out, runs);
done:
	if (meta != NULL) {
		/* What was recorded stays, with its hashes, even when a run failed. */
		int keep = rc;
		char why[1024];
		snprintf(why, sizeof(why), "%s", rc < 0 ? lm_error_last()->message : "");
		lm_bench_iso_time(lm_clock_epoch(), when, sizeof(when));
		cJSON_AddStringToObject(meta, "ended_at", when);
		if (rc < 0)
			cJSON_AddStringToObject(meta, "failure", why);
		else
			cJSON_AddNullToObject(meta, "failure");
		if (write_record(r, meta) < 0 && keep == 0)
			keep = lm_error_last()->code;
		else if (keep < 0)
			lm_error_set(keep, "%s", why);
		rc = keep;
	}
	r->seconds = lm_clock_monotonic() - t0;
	cJSON_Delete(meta);
	outputs_free(&out, o.rounds);
	free(argv);
	target_close(&t);
	return rc;
}

void lm_bench_result_free(lm_bench_result *r)
{
	size_t i;

	if (r == NULL)
		return;
	free(r->dir);
	for (i = 0; i < r->ntests; i++)
		free(r->tests[i]);
	free(r->tests);
	free(r->stock_metal);
	free(r->shimmed_metal);
	free(r->stock_seconds);
	free(r->shimmed_seconds);
	free(r->stock_exit);
	free(r->shimmed_exit);
	free(r);
}
