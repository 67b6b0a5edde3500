/* What llama.cpp's Metal backend and MLX select from a device's answers (reference/metal.md,
 * docs/report-format.md "Derived workload flags"). */
#include "lume-metal/workload.h"

#include <string.h>

#include "report_internal.h"

#define PARAVIRTUAL_DEVICE "Apple Paravirtual device"

static int answers(const lm_report *report, int value)
{
	int i = lm_family_index(value);

	/* A family the report does not carry counts as "no", as it would for the workload. */
	return i >= 0 && report->family[i] == 1;
}

/* ggml looks for these chip names anywhere in the device name before it uses the tensor API. */
static int tensor_chip(const char *name)
{
	static const char *const chips[] = {"M5", "M6", "A19", "A20"};
	size_t i;

	for (i = 0; i < sizeof(chips) / sizeof(chips[0]); i++)
		if (strstr(name, chips[i]) != NULL)
			return 1;
	return 0;
}

void lm_workload_derive(const lm_report *report, lm_workload_flags *out)
{
	int apple6 = answers(report, 1006), apple7 = answers(report, 1007);
	int metal3 = answers(report, 5001), metal4 = answers(report, 5002);
	const char *name = report->device != NULL ? report->device : "";

	memset(out, 0, sizeof(*out));
	out->llama_simdgroup_reduction = apple7 || metal3;
	out->llama_simdgroup_mm = apple7;
	out->llama_bfloat16 = metal3 || apple6;
	out->llama_tensor = metal4 && tensor_chip(name);
	/* MLX builds residency sets whenever Metal3 is answered (macOS 15+); the paravirtual device
	 * cannot make them and MLX fails while creating its device. */
	out->mlx_residency_risk = metal3 && strcmp(name, PARAVIRTUAL_DEVICE) == 0;
}
