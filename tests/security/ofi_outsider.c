/* A process outside the job that speaks libfabric (tcp;ofi_rxm, as the
 * ranks' data endpoints do) and sends every TCP port it is given messages in
 * the form of ftmpi's eager messages: a 16-byte header (eager, context 0,
 * tag 0, uid 0), a made-up token, a payload, and CQ data claiming to be
 * process 1, rank 1. Each must be refused by the rank (it lacks the job's
 * token).
 *
 * usage: ofi_outsider COUNT PORT...   (127.0.0.1)
 * Prints "ofi_outsider: sent N" (sends that completed) and exits 0, or 2
 * when no libfabric endpoint could be opened. */
#define _POSIX_C_SOURCE 200809L
#include <arpa/inet.h>
#include <netinet/in.h>
#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: ofi_outsider COUNT PORT...\n");
        return 2;
    }
    const int count = atoi(argv[1]);
    struct fi_info *hints = fi_allocinfo(), *info = NULL;
    hints->caps = FI_MSG | FI_TAGGED;
    hints->mode = FI_CONTEXT | FI_CONTEXT2;
    hints->ep_attr->type = FI_EP_RDM;
    hints->domain_attr->av_type = FI_AV_TABLE;
    hints->domain_attr->mr_mode = FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY;
    hints->domain_attr->cq_data_size = 8;
    hints->addr_format = FI_SOCKADDR_IN;
    hints->fabric_attr->prov_name = strdup("tcp;ofi_rxm");
    struct fid_fabric *fabric;
    struct fid_domain *domain;
    struct fid_av *av;
    struct fid_cq *cq;
    struct fid_ep *ep;
    struct fi_av_attr av_attr = {.type = FI_AV_TABLE, .count = 64};
    struct fi_cq_attr cq_attr = {.format = FI_CQ_FORMAT_TAGGED, .wait_obj = FI_WAIT_NONE};
    if (fi_getinfo(FI_VERSION(1, 14), NULL, NULL, 0, hints, &info) != 0 ||
        fi_fabric(info->fabric_attr, &fabric, NULL) || fi_domain(fabric, info, &domain, NULL) ||
        fi_av_open(domain, &av_attr, &av, NULL) || fi_cq_open(domain, &cq_attr, &cq, NULL) ||
        fi_endpoint(domain, info, &ep, NULL) || fi_ep_bind(ep, &av->fid, 0) ||
        fi_ep_bind(ep, &cq->fid, FI_TRANSMIT | FI_RECV) || fi_enable(ep)) {
        fprintf(stderr, "ofi_outsider: no tcp;ofi_rxm endpoint\n");
        return 2;
    }
    struct fi_context2 ctx;
    int sent = 0;
    for (int a = 2; a < argc; ++a) {
        struct sockaddr_in to = {.sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(argv[a]))};
        to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        fi_addr_t dest;
        if (fi_av_insert(av, &to, 1, &dest, 0, NULL) != 1) continue;
        for (int i = 0; i < count; ++i) {
            unsigned char msg[64] = {0};
            const uint64_t fake_token = 0x0123456789abcdefull + (uint64_t)i;
            memcpy(msg + 16, &fake_token, sizeof fake_token);
            memset(msg + 24, 'x', sizeof msg - 24);
            const uint64_t data = (UINT64_C(1) << 32) | 1u; /* process 1, rank 1 */
            ssize_t rc;
            const double give_up = now() + 5;
            while ((rc = fi_senddata(ep, msg, sizeof msg, NULL, data, dest, &ctx)) == -FI_EAGAIN && now() < give_up) {
                struct fi_cq_tagged_entry e;
                (void)fi_cq_read(cq, &e, 1);
            }
            if (rc != 0) break;
            int done = 0;
            while (!done && now() < give_up) {
                struct fi_cq_tagged_entry e;
                const ssize_t n = fi_cq_read(cq, &e, 1);
                if (n == 1) {
                    ++sent;
                    done = 1;
                } else if (n == -FI_EAVAIL) {
                    struct fi_cq_err_entry err = {0};
                    fi_cq_readerr(cq, &err, 0);
                    done = -1;
                }
            }
            if (done != 1) break; /* not a data endpoint (a liveness listener resets it) */
        }
    }
    printf("ofi_outsider: sent %d\n", sent);
    fi_close(&ep->fid);
    fi_close(&cq->fid);
    fi_close(&av->fid);
    fi_close(&domain->fid);
    fi_close(&fabric->fid);
    fi_freeinfo(info);
    fi_freeinfo(hints);
    return 0;
}
