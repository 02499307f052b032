/* Written by tests/unit/jws_vectors.py: do not edit. */
#define JWS_VECTOR_JWKS \
	"{\"keys\":[{\"kty\":\"RSA\",\"kid\":\"r1\",\"use\":\"sig\",\"n\":\"tGAli9I2J3N6dvrJrez-tJ9RzUMYySR-haTz-K3x3b7LHkNQzy6ThEYXrCenRTcWTok867JyNM61nY6JqR7G5uR2lynQl8I8UnS5M2vL1b4MygYaAF_cUCn--MDMgTWCHRJzNyMKlcRZd6HU4ZyvWf5gf4MEvCUr-WI4I4rL__NfVy-V0H1rCy_AVnBXrteEiuKVAQH6Chzo1D8A3Jvt27EWZmMGALjPG0DL1bFXhnsI-xSLzF6kTjvVc865tfgAZuU2UInZiDLVrI48QM5OfVbN_XqomFpM0nQCpSjZV9TD2lvNfKvNMa2bWCVJLw7kdUuP8WC_4uqTYdki1voNvQ\",\"e\":\"AQAB\"},{\"kty\":\"EC\",\"kid\":\"e1\",\"crv\":\"P-256\",\"x\":\"gZhTidmPqt4bTQiWBbVaM65fphKwiEwBsm0c8el4n88\",\"y\":\"7FEssZYQKQjicwBeXpX0USJrUAAqEomibi5NtYvfxLA\"},{\"kty\":\"OKP\",\"kid\":\"o1\",\"crv\":\"Ed25519\",\"x\":\"0dXFuCeWlQFZI2Hjobj1yA0uv41DcRHu1NiHluYYPqE\"}]}"
#define JWS_VECTOR_JWKS_SHORT \
	"{\"keys\":[{\"kty\":\"EC\",\"crv\":\"P-256\",\"x\":\"RAMCkLVlPTfDqXxtPrdS2vazX3R9AegpnoiCNItVPeU\",\"y\":\"6zLBPMjeQe2hNc7wJ0vcZuKz7XaPmziWNFSErUDqKQ\"}]}"
#define JWS_VECTOR_PAYLOAD \
	"{\"iss\":\"client-1\",\"sub\":\"client-1\",\"jti\":\"j1\"}"
#define JWS_PS256 \
	"eyJhbGciOiJQUzI1NiIsImtpZCI6InIxIn0.eyJpc3MiOiJjbGllbnQtMSIsInN1YiI6ImNsaWVudC0xIiwianRpIjoiajEifQ.KtH5IC11SF1lT5T4RcIKpvFu_oTO3RztiFu-3djVUBdnFSHdqwblFiPRuA0SJtKiK18E4MF8cRKbX1C2AxQ8PG0JlGcjfQ0tkgfc0h67OJ_4x2dB2AEv41WQTQibxPU9wjtsW126GZEw_Ik7wuA2b4N0SXV90fxQMACScTpQs9DRi7-V44PBagS17zVVetg205f_tqBda7EnL9IG0yRmeIGZn21Pke2WLA15TRnfHiUBX5JsMefaN4bmHvmmNVHUb087t2aFcwoBS7tWK2frCFz0Wuj5qQwt02iUy1ZMKPRd5fqPSKIYsBaC35MdQwvZOkJKMUDEgMfouv-0X_tfXA"
#define JWS_PS256_NOKID \
	"eyJhbGciOiJQUzI1NiJ9.eyJpc3MiOiJjbGllbnQtMSIsInN1YiI6ImNsaWVudC0xIiwianRpIjoiajEifQ.n_3JngMSqFptsRJ8lBoYCwaaz9dTyyTKCigXY3WVmdfGdeiLCnLyNI_a_zVY92bvKjzrdNmMw7-8WCzu8_SKIcB40EzaINaAI4YRRzjhJYwKcfRGUwLX774UlXpZSV70dIgEQ-qmvRjrCM7lD4HxNQfNuiSgHPaUzuAmRHB9um-PF02gE2BtUhBlmbB4yPYydvX9vcl4dtHsfbjx0KJEtJPNxmjbYJQvFWpV9pvcnXjrftbSac1kB510TMr-BA_7Y8aveE1w2if6ZavglosrVa5AwUOduJ3znO15fxYbAZGoZqLnuYvOFBF-Jaqmz5E2-PaPNHfK4NOjZyW3MNEuOQ"
#define JWS_ES256 \
	"eyJhbGciOiJFUzI1NiIsImtpZCI6ImUxIn0.eyJpc3MiOiJjbGllbnQtMSIsInN1YiI6ImNsaWVudC0xIiwianRpIjoiajEifQ.7oi5fWIt2gE4UEG8xzhxw0FAuOUYZmHE7H_eCobJLa-xZTQW_uB8795x3KDdXMjTZeKuh1IZvvk2GqszyUZhPA"
#define JWS_EDDSA \
	"eyJhbGciOiJFZERTQSIsImtpZCI6Im8xIn0.eyJpc3MiOiJjbGllbnQtMSIsInN1YiI6ImNsaWVudC0xIiwianRpIjoiajEifQ.iVmWJFaBH2VNzIWuQrLbTwW0qd8P0bYBUCKRjBLAgk0uTdp4iYykLG72R75udH5ekzeYCs6fkYlcc5T1NunMCg"
#define JWS_RS256 \
	"eyJhbGciOiJSUzI1NiIsImtpZCI6InIxIn0.eyJpc3MiOiJjbGllbnQtMSIsInN1YiI6ImNsaWVudC0xIiwianRpIjoiajEifQ.Mih7JP3LPT-jCCAkdsEgqNTXqamBzHutzPbPLyier5W7e96rJq_beoFKo_vOuD8L8SyUflLFiYvFZRxuUG6SDMHHMmwib73S_llgKcqjaweYxP62CPM9BErJxiw8g6Bc7HzyxZl5ZGaFH3pj-SltJ5FC9uXwGav-vSuVz0Kc9Cv7WyeNEv1aJAUMXxXwwcQ5a3du1fr8vrqNc1zQSOBqrpGgEaouA-hfIbLTN1NMBsnmTvdvrQkvVLXkbpQRE-sVAjdzzLc3f8BCKCm6vc3PU5YXktwAIuHeXwBgJFNzM5lxLbJ2SEbALRMN1tdpfp2p-uI_36E7Pb9jwFZ8PU601Q"
#define JWS_PS256_SALT_MAX \
	"eyJhbGciOiJQUzI1NiIsImtpZCI6InIxIn0.eyJpc3MiOiJjbGllbnQtMSIsInN1YiI6ImNsaWVudC0xIiwianRpIjoiajEifQ.PS0qcK1iuH6_CUEfJSEHyhNAT6Bs5PIfFVJ6y_EDG2duy2Hs8jNIBNZ3PGwWD2rhns7gH8drZE3p1Z7jPbvlSe1CTcRxFPDE1FII-BRFS3olX2WaqPm6QMwrXt05i81nJSLMLIDYz2A1uXEgI4WnbU8bEQtBRx4bm6ry4N-xgFkliWPWCnCyl2f6DxL8dmr017Vc05WJC7Og6I59LhwvQa4I458LmLAvO4anq05HhTzzms1gnuYC35Ck65WNMK5qdSNPm1DCVJXWdF-KGKhhg_a5-fKMWZQlGaj0lGkpvXfIRVKu-0nJZlKJvn3mGyUq3uWxWNmp8XkEUa30AlWeBg"
#define JWS_ES256_WRONG_KID \
	"eyJhbGciOiJFUzI1NiIsImtpZCI6InIxIn0.eyJpc3MiOiJjbGllbnQtMSIsInN1YiI6ImNsaWVudC0xIiwianRpIjoiajEifQ.qD7KLkFfn3CrwRXKpt4a3GegTlDPGV1JNmMWQLAug4sabaFWz8lwmgmDKyRDLun4GLw-U8Cf9DmTDayscQCZoQ"
#define JWS_ES256_SHORT_COORDINATE \
	"eyJhbGciOiJFUzI1NiJ9.eyJpc3MiOiJjbGllbnQtMSIsInN1YiI6ImNsaWVudC0xIiwianRpIjoiajEifQ.dw8EV2HtLH_FMhP9IY7xP9vBzkREcSuQgBqI8NkH1ECjSGw70A7e0maCtV0YLMfV2YdJQ0FtFhisrEaGuV9JpQ"
