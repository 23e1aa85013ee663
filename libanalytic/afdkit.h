/* afdkit.h: the public interface of libanalytic, afdkit's closed-form core.
 *
 * Programs using the library should disable GSL's default error handler,
 * which aborts, with gsl_set_error_handler_off(): afdkit checks and reports
 * every GSL status itself.
 */
#ifndef AFDKIT_H
#define AFDKIT_H

#include "afd_status.h"
#include "afd_parse.h"
#include "afd_csv.h"
#include "afd_event.h"
#include "afd_trace.h"
#include "afd_renewal.h"
#include "afd_arrivals.h"
#include "afd_barrier.h"
#include "afd_workload.h"
#include "afd_hist.h"
#include "afd_tail.h"
#include "afd_prefix.h"
#include "afd_hw.h"
#include "afd_ratio.h"
#include "afd_cost.h"
#include "afd_stages.h"
#include "afd_kvretrieve.h"
#include "afd_calibrate.h"
#include "afd_queue.h"
#include "afd_pd.h"
#include "afd_deadline.h"
#include "afd_priority.h"
#include "afd_model.h"
#include "afd_device.h"
#include "afd_estimate.h"
#include "afd_profile.h"
#include "afd_pareto.h"
#include "afd_pool.h"
#include "afd_serving.h"
#include "afd_taichi.h"
#include "afd_perfmodel.h"
#include "afd_twotier.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The library's version, "MAJOR.MINOR.PATCH". */
AFD_API const char *afd_version(void);

#ifdef __cplusplus
}
#endif

#endif /* AFDKIT_H */
