#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <onnxzip/onnxzip.h>

static PyObject *native_version(PyObject *self, PyObject *args)
{
    (void)self, (void)args;
    return PyUnicode_FromString(onnxzip_version());
}

static PyMethodDef native_methods[] = {
    { "version", native_version, METH_NOARGS, "The C library's version." },
    { NULL, NULL, 0, NULL },
};

static struct PyModuleDef native_module = { PyModuleDef_HEAD_INIT, "onnxzip._native", NULL, -1, native_methods,
                                            NULL, NULL, NULL, NULL };

PyMODINIT_FUNC PyInit__native(void);
PyMODINIT_FUNC PyInit__native(void)
{
    return PyModule_Create(&native_module);
}
